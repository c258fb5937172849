package forme

import (
	"fmt"
	"github.com/prose-store/prose/internal/lazyre"
	"sort"
	"strings"
)

// Upgrade is the plan for one legacy Contract Markdown source: the rewritten
// text, the path it moves to, what was rewritten, and what needs the
// author's judgment.
type Upgrade struct {
	Path    string       // the source as read
	NewPath string       // where it belongs: Path, or *.md renamed to *.prose.md
	Old     []byte       // the source as read
	New     []byte       // the rewritten source (Old when nothing was rewritten)
	Changes []string     // one line per mechanical rewrite
	Review  []Diagnostic // retired forms left for the author (upgrade_review)
}

// Changed reports whether the upgrade rewrites or moves the file.
func (u *Upgrade) Changed() bool { return u.NewPath != u.Path || string(u.New) != string(u.Old) }

// UpgradeSource plans the migration of one source to the current Contract
// Markdown (the changelog's "Migration Map: Kinds & Sections"). The
// mechanical rewrites:
//
//   - kind: service → kind: function, its ### Requires → ### Parameters and
//     ### Ensures → ### Returns;
//   - a responsibility's (or gateway's) ### Ensures → ### Maintains; a
//     function's or pattern's → ### Returns;
//   - ### Criteria → postconditions under the node's ### Maintains (each item
//     becomes "Postcondition: …");
//   - ### Constraints → ### Invariants;
//   - a gateway without ### Continuity gains ### Continuity: external-driven;
//   - a *.md source with a kind: becomes *.prose.md.
//
// Every line of content and every id is kept; only headings, the kind line
// and the Postcondition prefixes change, and criteria move under Maintains.
// What needs judgment — kind: system, ### Services, ### Wiring, ###
// Fulfillment, ### Memory — is reported in Review, never rewritten.
func UpgradeSource(path string, src []byte) *Upgrade {
	u := &Upgrade{Path: path, NewPath: path, Old: src, New: src}
	if !strings.HasSuffix(path, ".prose.md") && strings.HasSuffix(path, ".md") {
		u.NewPath = strings.TrimSuffix(path, ".md") + ".prose.md"
		u.Changes = append(u.Changes, fmt.Sprintf("%s: renamed to %s (contract sources are *.prose.md)", path, u.NewPath))
	}
	f := ParseFile(path, src)
	if len(f.Contracts) == 0 {
		return u
	}
	r := newRewriter(src)
	// Section ends: every section runs to the next ### or ## heading.
	var starts []int
	for _, c := range f.Contracts {
		if c.Inline {
			starts = append(starts, c.Pos.Line)
		}
		for _, s := range c.Sections {
			starts = append(starts, s.Pos.Line)
		}
	}
	sort.Ints(starts)
	end := func(line int) int { // the last line of the section at line
		i := sort.SearchInts(starts, line+1)
		if i < len(starts) {
			return starts[i] - 1
		}
		return len(r.lines)
	}
	review := func(pos Pos, format string, a ...any) {
		u.Review = append(u.Review, diagAt(CodeUpgradeReview, path, pos, format, a...))
	}

	for _, c := range f.Contracts {
		kind := c.Kind
		switch c.Retired {
		case "service":
			kind = KindFunction
			if line, ok := r.frontmatterKind(); ok {
				r.replace(line, r.kindLine(line, "function"))
				u.Changes = append(u.Changes, fmt.Sprintf("%s:%d: kind: service → kind: function", path, line))
			}
		case "system":
			pos := c.Pos
			if p, ok := f.fmKeys["kind"]; ok {
				pos = p
			}
			review(pos, "%s: kind: system is retired and has no mechanical replacement: flatten it into one responsibility that `call`s functions in ### Execution (a sequential workflow), or split it into responsibilities wired by ### Requires (parallel fan-in); the author decides", c.Name)
		}
		var maintains *Section // the section criteria fold into
		for _, s := range c.Sections {
			if s.Key == "maintains" && maintains == nil {
				maintains = s
			}
		}
		for _, s := range c.Sections {
			line := s.Pos.Line
			rename := func(to string) {
				r.replace(line, "### "+to)
				u.Changes = append(u.Changes, fmt.Sprintf("%s:%d: %s: ### %s → ### %s", path, line, c.Name, s.Heading, to))
			}
			switch {
			case s.Key == "requires" && c.Retired == "service":
				rename("Parameters")
			case s.Key == "ensures" && (kind == KindFunction || kind == KindPattern):
				rename("Returns")
			case s.Key == "ensures" && (kind == KindResponsibility || kind == KindGateway):
				rename("Maintains")
				if maintains == nil {
					maintains = s
				}
			case s.Key == "ensures":
				review(s.Pos, "%s: ### Ensures under kind: %s: it becomes ### Maintains in a responsibility and ### Returns in a function; set the kind, then run prose upgrade again", c.Name, kindLabel(c))
			case s.Key == "constraints":
				rename("Invariants")
			case s.Key == "services" || s.Key == "wiring":
				review(s.Pos, "%s: ### %s went with kind: system: compose with `call` in ### Execution, or with ### Requires subscriptions wired by Forme; the author decides which", c.Name, s.Heading)
			case s.Key == "fulfillment":
				review(s.Pos, "%s: ### Fulfillment folds into the render itself (### Execution) or a called kind: function; the author decides where", c.Name)
			case s.Key == "memory":
				review(s.Pos, "%s: ### Memory folds into the world-model the node maintains (### Maintains), or is dropped in a function; the author decides what persists", c.Name)
			}
		}
		// Criteria fold into Maintains as postconditions.
		for _, s := range c.Sections {
			if s.Key != "criteria" {
				continue
			}
			if kind != KindResponsibility && kind != KindGateway {
				review(s.Pos, "%s: ### Criteria under kind: %s: postconditions belong to a responsibility's ### Maintains; the author decides where these go", c.Name, kindLabel(c))
				continue
			}
			body := postconditionLines(r.lines[s.Pos.Line:end(s.Pos.Line)])
			if maintains == nil {
				r.replace(s.Pos.Line, "### Maintains")
				r.replaceRange(s.Pos.Line+1, end(s.Pos.Line), append(append([]string{""}, body...), ""))
				maintains = s
				u.Changes = append(u.Changes, fmt.Sprintf("%s:%d: %s: ### Criteria → ### Maintains postconditions", path, s.Pos.Line, c.Name))
				continue
			}
			r.remove(s.Pos.Line, end(s.Pos.Line))
			r.appendAfter(end(maintains.Pos.Line), r.blankAround(end(maintains.Pos.Line), body))
			u.Changes = append(u.Changes, fmt.Sprintf("%s:%d: %s: ### Criteria → postconditions under ### Maintains (line %d)", path, s.Pos.Line, c.Name, maintains.Pos.Line))
		}
		if kind == KindGateway && len(c.sections("continuity")) == 0 {
			last := c.Pos.Line
			if n := len(c.Sections); n > 0 {
				last = end(c.Sections[n-1].Pos.Line)
			}
			r.appendAfter(last, r.blankAround(last, []string{"### Continuity: external-driven"}))
			u.Changes = append(u.Changes, fmt.Sprintf("%s:%d: %s: gateway gains ### Continuity: external-driven", path, last, c.Name))
		}
	}
	u.New = r.bytes()
	return u
}

// kindLabel is the kind as the file writes it, retired kinds included.
func kindLabel(c *Contract) string {
	if c.Retired != "" {
		return c.Retired
	}
	return string(c.Kind)
}

// postconditionLines turns a ### Criteria body into postconditions: each
// top-level list item and each paragraph gains the "Postcondition: " prefix
// (unless it has one); every other line is kept as it is. Leading and
// trailing blank lines are dropped.
func postconditionLines(body []string) []string {
	for len(body) > 0 && strings.TrimSpace(body[0]) == "" {
		body = body[1:]
	}
	var out []string
	paraStart := true
	inFence := false
	for _, l := range body {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			inFence = !inFence
			out = append(out, l)
		case inFence:
			out = append(out, l)
		case t == "":
			paraStart = true
			out = append(out, l)
		case listItemRe().MatchString(l):
			m := listItemRe().FindStringSubmatchIndex(l)
			rest := l[m[1]:]
			if !postconditionRe().MatchString(rest) {
				rest = "Postcondition: " + rest
			}
			out = append(out, l[:m[1]]+rest)
			paraStart = false
		case paraStart && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t"):
			if !postconditionRe().MatchString(t) {
				l = "Postcondition: " + l
			}
			out = append(out, l)
			paraStart = false
		default:
			out = append(out, l)
		}
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return out
}

// listItemRe matches a top-level Markdown list item marker.
var listItemRe = lazyre.New(`^(?:[-*+]|\d+[.)])[ \t]+`)

// rewriter edits a source line by line. Edits name lines of the original
// (1-based), so they never shift one another; bytes applies them.
type rewriter struct {
	lines   []string // without line endings
	eol     string
	finalNL bool
	repl    map[int][]string // line → its replacement lines (nil: removed)
	after   map[int][]string // line → lines inserted after it (0: at the top)
}

func newRewriter(src []byte) *rewriter {
	s := string(src)
	r := &rewriter{eol: "\n", repl: map[int][]string{}, after: map[int][]string{}}
	if strings.Contains(s, "\r\n") {
		r.eol = "\r\n"
	}
	r.finalNL = strings.HasSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\n")
	if s != "" || r.finalNL {
		r.lines = strings.Split(s, "\n")
	}
	for i, l := range r.lines {
		r.lines[i] = strings.TrimSuffix(l, "\r")
	}
	return r
}

func (r *rewriter) replace(line int, text string) { r.repl[line] = []string{text} }

// replaceRange puts lines in place of lines from..to (inclusive).
func (r *rewriter) replaceRange(from, to int, lines []string) {
	r.remove(from, to)
	r.appendAfter(from-1, lines)
}

func (r *rewriter) remove(from, to int) {
	for l := from; l <= to; l++ {
		r.repl[l] = nil
	}
}

func (r *rewriter) appendAfter(line int, lines []string) {
	r.after[line] = append(r.after[line], lines...)
}

// frontmatterKind finds the kind: line of the leading frontmatter.
func (r *rewriter) frontmatterKind() (int, bool) {
	if len(r.lines) == 0 || strings.TrimSpace(strings.TrimPrefix(r.lines[0], "\ufeff")) != "---" {
		return 0, false
	}
	for i := 1; i < len(r.lines); i++ {
		t := strings.TrimSpace(r.lines[i])
		if t == "---" || t == "..." {
			break
		}
		if kindLineRe().MatchString(r.lines[i]) {
			return i + 1, true
		}
	}
	return 0, false
}

var kindLineRe = lazyre.New(`^kind[ \t]*:[ \t]*`)

// kindLine rewrites the kind: line's value, keeping any comment after it.
func (r *rewriter) kindLine(line int, kind string) string {
	l := r.lines[line-1]
	m := kindLineRe().FindStringIndex(l)
	rest := l[m[1]:]
	comment := ""
	if i := strings.Index(rest, "#"); i > 0 && (rest[i-1] == ' ' || rest[i-1] == '\t') {
		j := i
		for j > 0 && (rest[j-1] == ' ' || rest[j-1] == '\t') {
			j--
		}
		comment = rest[j:]
	}
	return l[:m[1]] + kind + comment
}

// blankAround wraps lines inserted after line in blank lines, so they stand
// apart from what precedes and follows them: one blank before unless line
// is blank, one after.
func (r *rewriter) blankAround(line int, lines []string) []string {
	var out []string
	if line > 0 && line <= len(r.lines) && strings.TrimSpace(r.lines[line-1]) != "" {
		out = append(out, "")
	}
	out = append(out, lines...)
	if r.keptAfter(line) {
		out = append(out, "")
	}
	return out
}

// keptAfter reports whether any text that is not removed follows line.
func (r *rewriter) keptAfter(line int) bool {
	for j := line + 1; j <= len(r.lines); j++ {
		rep, edited := r.repl[j]
		if edited && rep == nil {
			continue
		}
		if edited || strings.TrimSpace(r.lines[j-1]) != "" {
			return true
		}
	}
	return false
}

func (r *rewriter) bytes() []byte {
	var out []string
	out = append(out, r.after[0]...)
	for i, l := range r.lines {
		n := i + 1
		if rep, ok := r.repl[n]; ok {
			out = append(out, rep...)
		} else {
			out = append(out, l)
		}
		out = append(out, r.after[n]...)
	}
	s := strings.Join(out, r.eol)
	if r.finalNL {
		s += r.eol
	}
	return []byte(s)
}
