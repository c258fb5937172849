package forme

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/internal/lazyre"
)

// PostCheck is a postcondition prose can check on a render's output before
// it is published (docs/diagnostics.md §Checked postconditions). Paths are
// dotted paths into the structured truth (canon.ParsePath), where a `*`
// segment stands for every item of a list or every value of an object.
type PostCheck struct {
	// Condition is the postcondition's text as the contract wrote it.
	Condition string `json:"condition"`
	// Kind is required, each_has, one_of or unique.
	Kind string `json:"kind"`
	// Path is the value (required, one_of) or the collection (each_has,
	// unique) the check reads.
	Path string `json:"path"`
	// Fields are the keys each item must hold (each_has).
	Fields []string `json:"fields,omitempty"`
	// Values are the allowed values (one_of).
	Values []string `json:"values,omitempty"`
	// By is the key items are unique by (unique); "" compares whole items.
	By string `json:"by,omitempty"`
}

// The kinds of PostCheck.
const (
	CheckRequired = "required"
	CheckEachHas  = "each_has"
	CheckOneOf    = "one_of"
	CheckUnique   = "unique"
)

var (
	postRequiredRe = lazyre.New("(?i)^(?:the\\s+)?`([^`]+)`\\s+(?:is|are|must\\s+be)\\s+(?:always\\s+)?(?:required|present)$")
	postEachRe     = lazyre.New("(?i)^(?:each|every)\\s+(?:item\\s+(?:of|in)\\s+)?`([^`]+)`(?:\\s+item)?\\s+has\\s*:?\\s+(.+)$")
	postOneOfRe    = lazyre.New("(?i)^(?:the\\s+)?`([^`]+)`\\s+(?:is|must\\s+be)\\s+one\\s+of\\s*:?\\s+(.+)$")
	postUniqueRe   = lazyre.New("(?i)^(?:the\\s+)?`([^`]+)`(?:\\s+items)?\\s+(?:are|is|must\\s+be)\\s+unique(?:\\s+by\\s+`([^`]+)`)?$")
)

// ParsePostcondition reads text as a checkable postcondition. It reports
// false when the text is outside the checkable form: such a postcondition
// is left to the render (unchecked), never reported as passed.
func ParsePostcondition(text string) (PostCheck, bool) {
	t := strings.TrimSpace(text)
	t = strings.TrimSpace(strings.TrimRight(t, ".;"))
	t = strings.Join(strings.Fields(t), " ")
	pc := PostCheck{Condition: strings.TrimSpace(text)}
	okPath := func(p string) bool {
		_, err := canon.ParsePath(p)
		return err == nil && p != ""
	}
	if m := postRequiredRe().FindStringSubmatch(t); m != nil && okPath(m[1]) {
		pc.Kind, pc.Path = CheckRequired, m[1]
		return pc, true
	}
	if m := postEachRe().FindStringSubmatch(t); m != nil && okPath(m[1]) {
		fields, ok := backtickList(m[2])
		if !ok {
			return PostCheck{}, false
		}
		pc.Kind, pc.Path, pc.Fields = CheckEachHas, m[1], fields
		return pc, true
	}
	if m := postOneOfRe().FindStringSubmatch(t); m != nil && okPath(m[1]) {
		vals, ok := backtickList(m[2])
		if !ok {
			return PostCheck{}, false
		}
		pc.Kind, pc.Path, pc.Values = CheckOneOf, m[1], vals
		return pc, true
	}
	if m := postUniqueRe().FindStringSubmatch(t); m != nil && okPath(m[1]) {
		pc.Kind, pc.Path, pc.By = CheckUnique, m[1], m[2]
		return pc, true
	}
	return PostCheck{}, false
}

// backtickList reads "`a`, `b` and `c`" (separators: commas, "and", "or");
// anything else outside the backticks makes it no list.
func backtickList(s string) ([]string, bool) {
	var out []string
	rest := strings.TrimSpace(s)
	for rest != "" {
		if rest[0] != '`' {
			return nil, false
		}
		end := strings.IndexByte(rest[1:], '`')
		if end < 0 {
			return nil, false
		}
		v := rest[1 : 1+end]
		if v == "" {
			return nil, false
		}
		out = append(out, v)
		rest = strings.TrimSpace(rest[2+end:])
		rest = strings.TrimSpace(strings.TrimPrefix(rest, ","))
		for _, w := range []string{"and ", "or "} {
			if strings.HasPrefix(strings.ToLower(rest), w) {
				rest = strings.TrimSpace(rest[len(w):])
			}
		}
	}
	return out, len(out) > 0
}

// PostconditionChecks splits conditions into the checks prose runs and the
// conditions it leaves unchecked, in order.
func PostconditionChecks(conditions []string) (checks []PostCheck, unchecked []string) {
	for _, c := range conditions {
		if pc, ok := ParsePostcondition(c); ok {
			checks = append(checks, pc)
		} else {
			unchecked = append(unchecked, c)
		}
	}
	return checks, unchecked
}

// Check evaluates pc on a structured truth (published.ReadTruth's value). It
// returns "" when pc holds, else what broke it, naming the path.
func (pc PostCheck) Check(truth any) string {
	p, err := canon.ParsePath(pc.Path)
	if err != nil {
		return fmt.Sprintf("%s is not a path: %v", pc.Path, err)
	}
	vals := resolve(truth, []string(p), "")
	switch pc.Kind {
	case CheckRequired:
		if len(vals) == 0 {
			return pc.Path + " is missing"
		}
		for _, v := range vals {
			if !v.ok || v.v == nil {
				return v.path + " is missing"
			}
		}
	case CheckOneOf:
		for _, v := range vals {
			if !v.ok {
				continue // absence is `is required`'s business
			}
			s, scalar := scalarText(v.v)
			if !scalar {
				return fmt.Sprintf("%s is %s, not one of %s", v.path, kindOf(v.v), strings.Join(pc.Values, ", "))
			}
			found := false
			for _, want := range pc.Values {
				if s == want {
					found = true
					break
				}
			}
			if !found {
				return fmt.Sprintf("%s is %q, not one of %s", v.path, s, strings.Join(pc.Values, ", "))
			}
		}
	case CheckEachHas:
		for _, c := range vals {
			if !c.ok {
				continue // an absent collection has no items
			}
			items, ok := itemsOf(c.v, c.path)
			if !ok {
				return fmt.Sprintf("%s is %s, not a list or an object of items", c.path, kindOf(c.v))
			}
			for _, it := range items {
				obj, ok := it.v.(map[string]any)
				if !ok {
					return fmt.Sprintf("%s is %s, not an object with %s", it.path, kindOf(it.v), strings.Join(pc.Fields, ", "))
				}
				for _, f := range pc.Fields {
					if v, ok := obj[f]; !ok || v == nil {
						return fmt.Sprintf("%s has no %s", it.path, f)
					}
				}
			}
		}
	case CheckUnique:
		for _, c := range vals {
			if !c.ok {
				continue
			}
			items, ok := itemsOf(c.v, c.path)
			if !ok {
				return fmt.Sprintf("%s is %s, not a list or an object of items", c.path, kindOf(c.v))
			}
			seen := map[string]string{}
			for _, it := range items {
				key := it.v
				if pc.By != "" {
					obj, ok := it.v.(map[string]any)
					if !ok {
						return fmt.Sprintf("%s is %s, not an object with %s", it.path, kindOf(it.v), pc.By)
					}
					if key, ok = obj[pc.By]; !ok {
						return fmt.Sprintf("%s has no %s", it.path, pc.By)
					}
				}
				b, err := canon.Marshal(key)
				if err != nil {
					return fmt.Sprintf("%s: %v", it.path, err)
				}
				if first, dup := seen[string(b)]; dup {
					if pc.By != "" {
						return fmt.Sprintf("%s repeats %s %s of %s", it.path, pc.By, cutText(string(b), 80), first)
					}
					return fmt.Sprintf("%s repeats %s", it.path, first)
				}
				seen[string(b)] = it.path
			}
		}
	default:
		return "unknown check " + pc.Kind
	}
	return ""
}

type located struct {
	path string
	v    any
	ok   bool // false: the path does not exist
}

// resolve walks segs from v; "*" fans out over a list's items or an
// object's values. A missing key yields one located value with ok false.
func resolve(v any, segs []string, at string) []located {
	if len(segs) == 0 {
		return []located{{path: at, v: v, ok: true}}
	}
	seg := segs[0]
	if seg == "*" {
		items, ok := itemsOf(v, at)
		if !ok {
			return []located{{path: at + ".*", ok: false}}
		}
		var out []located
		for _, it := range items {
			out = append(out, resolve(it.v, segs[1:], it.path)...)
		}
		return out
	}
	next := seg
	if at != "" {
		next = at + "." + seg
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []located{{path: next, ok: false}}
	}
	c, ok := obj[seg]
	if !ok {
		return []located{{path: next, ok: false}}
	}
	return resolve(c, segs[1:], next)
}

// itemsOf lists a collection's items: a list's elements (path[i]) or an
// object's values in key order (path.key).
func itemsOf(v any, at string) ([]located, bool) {
	switch x := v.(type) {
	case []any:
		out := make([]located, len(x))
		for i, e := range x {
			out[i] = located{path: at + "[" + strconv.Itoa(i) + "]", v: e, ok: true}
		}
		return out, true
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]located, len(keys))
		for i, k := range keys {
			p := k
			if at != "" {
				p = at + "." + k
			}
			out[i] = located{path: p, v: x[k], ok: true}
		}
		return out, true
	}
	return nil, false
}

func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
