package ingest

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/internal/testknob"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/wiki"
)

// The caps on a model's tool calls (docs/limits.md). Each is checked when
// the call is made; a call over a cap is an error result the model reads
// and may correct, and it changes nothing. Pages prose renders itself (the
// offline engine) are bounded by the source limits instead.
const (
	// MaxToolFolders is the most folders a page path a model names may
	// have above the page (a/b/c/page.html has 3).
	MaxToolFolders = 8
	// MaxToolNameBytes is the longest file or folder name, in bytes, a
	// model may give a page (file systems stop at 255).
	MaxToolNameBytes = 100
	// MaxToolTitleBytes is the longest title a model may give a new page.
	MaxToolTitleBytes = 500
	// MaxToolSlotBytes is the most HTML one slot may hold after a model's
	// write_slot or append_slot.
	MaxToolSlotBytes = 256 << 10
	// MaxToolMetaBytes is the largest set_meta updates, as JSON.
	MaxToolMetaBytes = 16 << 10
	// MaxToolMetaKeys is the most keys one set_meta may set, and the most
	// a page's meta may hold after a model added keys to it.
	MaxToolMetaKeys = 64
	// MaxToolFolderPages is the most pages one agent loop (one source's
	// generation, one page's enrichment) may create or move into a folder.
	MaxToolFolderPages = 50
	// MaxToolWriteBytes is the most slot HTML and meta (as JSON) the
	// calls of one agent loop may write in all.
	MaxToolWriteBytes = 16 << 20
	// MaxToolRelated is the most pages a related list a model sets names.
	MaxToolRelated = 50
	// MaxReviewItems is the most review items one model answer may hold.
	MaxReviewItems = 50
	// MaxReviewDetail is the longest detail of a review item, in bytes.
	MaxReviewDetail = 4 << 10
	// MaxToolCallsPerTurn is the most tool calls run from one answer; the
	// rest are answered with an error result (model.DefaultMaxCallsPerTurn).
	MaxToolCallsPerTurn = model.DefaultMaxCallsPerTurn
)

// ReviewKinds are the kinds a model may give a review item (or none).
// prose's own kinds (kept-edit, stale) are not among them.
var ReviewKinds = []string{"check", "question", "conflict", "missing", "outdated", "merge", "tool-error"}

// windowsDevices are the names Windows reserves in every folder, with any
// extension.
var windowsDevices = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true, "conin$": true, "conout$": true, "clock$": true}

// checkName refuses a page path a model names for a new page (new_page,
// move_page's destination): too deep, a name too long, a device name or a
// look-alike of one, a format character (bidi controls among them). It
// returns the path as the wiki reads it.
func checkName(p string) (string, error) {
	n, err := wikiPath(p)
	if err != nil {
		return "", err
	}
	segs := strings.Split(n, "/")
	if len(segs)-1 > MaxToolFolders {
		return "", fmt.Errorf("%s is %d folders deep; a page may be at most %d folders deep: choose a shallower path", n, len(segs)-1, MaxToolFolders)
	}
	for _, seg := range segs {
		if len(seg) > MaxToolNameBytes {
			return "", fmt.Errorf("the name %q is %d bytes; names are at most %d bytes: choose a shorter name", short(seg), len(seg), MaxToolNameBytes)
		}
		for _, r := range seg {
			if unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
				return "", fmt.Errorf("the name %q holds the invisible format character %U (bidi controls and joiners are refused): write the name without it", short(seg), r)
			}
		}
		if strings.HasSuffix(seg, " ") || strings.HasSuffix(strings.TrimSuffix(seg, ".html"), ".") {
			return "", fmt.Errorf("the name %q ends in a dot or a space, which some file systems drop: remove it", short(seg))
		}
		if isDevice(seg) {
			return "", fmt.Errorf("the name %q is, or folds to, a device name Windows reserves (con, prn, aux, nul, com1–9, lpt1–9): choose another name", short(seg))
		}
	}
	return n, nil
}

// wikiPath is p as the wiki reads a page path: normalized, relative to
// the wiki root, ending in .html. It looks nothing up.
func wikiPath(p string) (string, error) {
	n, err := published.NormalizePath(p)
	if err != nil {
		return "", err
	}
	n = strings.TrimPrefix(n, wiki.Dir+"/")
	if !strings.HasSuffix(n, ".html") {
		n += ".html"
	}
	return n, nil
}

// isDevice reports whether seg, folded by NFKC and lower-cased, names a
// Windows device (before its first dot): "con.html", "ｃｏｎ", "COM¹".
func isDevice(seg string) bool {
	f := strings.ToLower(norm.NFKC.String(seg))
	stem, _, _ := strings.Cut(f, ".")
	stem = strings.TrimRight(stem, " ")
	if windowsDevices[stem] {
		return true
	}
	if len(stem) == 4 && (strings.HasPrefix(stem, "com") || strings.HasPrefix(stem, "lpt")) && stem[3] >= '0' && stem[3] <= '9' {
		return true
	}
	return false
}

func short(s string) string {
	if len(s) <= 40 {
		return s
	}
	i := 40
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// foldKey is how two page paths that differ only in case or Unicode
// normalisation (Canary/canary, NFC/NFD café) compare equal.
func foldKey(rel string) string {
	return strings.ToLower(norm.NFKC.String(rel))
}

// nameIndex keeps the fold keys of every page the Tx sees, so a new name that
// a file system would take for an existing page is refused when it is
// made. It is loaded on the first check of a loop.
type nameIndex struct {
	keys   map[string]string // fold key → path
	folder map[string]int    // pages this loop put in each folder
}

// checkNewPage refuses rel as the path of a page this loop creates or
// moves (from, when moving) in: a fold-equal name of another page, or a
// folder this loop filled.
func (tb *toolbox) checkNewPage(rel, from string) error {
	if tb.names.keys == nil {
		all, err := tb.tx.List()
		if err != nil {
			return tb.fatal(err)
		}
		tb.names.keys = make(map[string]string, len(all))
		tb.names.folder = map[string]int{}
		for _, p := range all {
			tb.names.add(p)
		}
	}
	if other, ok := tb.names.keys[foldKey(rel)]; ok && other != rel && other != from {
		return fmt.Errorf("%s differs from the page %s only in case or Unicode normalisation, which some file systems take for the same file: write to %s or choose another name", rel, other, other)
	}
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if other, ok := tb.names.keys[foldKey(d)+"/"]; ok && other != d {
			return fmt.Errorf("the folder %s differs from the folder %s only in case or Unicode normalisation, which some file systems take for the same folder: file the page under %s", d, other, other)
		}
	}
	if d := path.Dir(rel); tb.names.folder[d] >= MaxToolFolderPages {
		return fmt.Errorf("this run put %d pages into %s already, the most one run may: file the page in another folder", tb.names.folder[d], d)
	}
	return nil
}

// placed records a page this loop created or moved in.
func (tb *toolbox) placed(rel string) {
	if tb.names.keys != nil {
		tb.names.add(rel)
		tb.names.folder[path.Dir(rel)]++
	}
}

// add records page rel and its folders (folder keys end in "/").
func (n *nameIndex) add(rel string) {
	n.keys[foldKey(rel)] = rel
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		k := foldKey(d) + "/"
		if _, ok := n.keys[k]; ok {
			break
		}
		n.keys[k] = d
	}
}

// checkSlotSize refuses a slot write that would leave the slot over
// MaxToolSlotBytes.
func (tb *toolbox) checkSlotSize(a plan.SlotArgs, appendTo bool) error {
	n := len(a.HTML)
	if appendTo {
		if rel, p, err := tb.tx.Read(a.Path); err == nil {
			old, _ := p.Slot(a.Slot)
			if tb.guard != nil {
				if prop, ok := tb.guard.proposed[slotKey{rel, a.Slot}]; ok {
					old = prop // the slot is kept: appends grow the proposal
				}
			}
			n += len(old)
		}
	}
	if n > MaxToolSlotBytes {
		return fmt.Errorf("slot %s would hold %d bytes; a slot holds at most %d bytes of HTML: write less, or split the text across pages", a.Slot, n, MaxToolSlotBytes)
	}
	return tb.spend(len(a.HTML))
}

// spend counts n bytes against the loop's MaxToolWriteBytes (which only a
// test lowers, through internal/testknob).
func (tb *toolbox) spend(n int) error {
	if limit := testknob.ToolWriteBytes(MaxToolWriteBytes); tb.written+n > limit {
		return fmt.Errorf("this run's calls wrote %d bytes already and may write at most %d: finish with what is written", tb.written, limit)
	}
	tb.written += n
	return nil
}

// checkMetaSize refuses set_meta updates too large or with too many keys,
// or that would leave the page with more than MaxToolMetaKeys keys.
func (tb *toolbox) checkMetaSize(a plan.SetMetaArgs) error {
	if len(a.Updates) > MaxToolMetaKeys {
		return fmt.Errorf("set_meta sets %d keys; one call sets at most %d", len(a.Updates), MaxToolMetaKeys)
	}
	b, _ := json.Marshal(a.Updates)
	if len(b) > MaxToolMetaBytes {
		return fmt.Errorf("set_meta updates are %d bytes as JSON; at most %d: keep meta short and put text in a slot", len(b), MaxToolMetaBytes)
	}
	if err := tb.spend(len(b)); err != nil {
		return err
	}
	_, p, err := tb.tx.Read(a.Path)
	if err != nil {
		return nil // the write reports the missing page
	}
	n, added := len(p.Meta), false
	for k, v := range a.Updates {
		_, had := p.Meta[k]
		switch {
		case v == nil && had:
			n--
		case v != nil && !had:
			n++
			added = true
		}
	}
	if added && n > MaxToolMetaKeys {
		return fmt.Errorf("the page's meta would hold %d keys; a model may add keys up to %d: remove keys or keep them in a slot", n, MaxToolMetaKeys)
	}
	return nil
}

// checkRelated checks a model's related meta: a list of wiki paths of
// existing pages (no URL, no path outside the wiki, no missing page). It
// returns the list as the wiki reads it.
func (tb *toolbox) checkRelated(v any) ([]any, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("related is a list of page paths under the wiki root (e.g. [\"ops/deploy.html\"])")
	}
	if len(list) > MaxToolRelated {
		return nil, fmt.Errorf("related lists %d pages; at most %d", len(list), MaxToolRelated)
	}
	out := make([]any, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("related holds %v; it lists page paths under the wiki root", e)
		}
		if strings.Contains(s, ":") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) {
			return nil, fmt.Errorf("related names %q; it lists page paths under the wiki root, not URLs or absolute paths", short(s))
		}
		rel, err := wikiPath(s)
		if err != nil {
			return nil, fmt.Errorf("related names %q: %v; it lists existing pages", short(s), err)
		}
		if p, ok, err := tb.tx.Page(rel); err != nil || !ok || p == nil {
			return nil, fmt.Errorf("related names %q, which is no page; it lists existing pages", short(s))
		}
		out = append(out, rel)
	}
	return out, nil
}

// checkReview keeps the review items of one model answer that are sound
// and says what it refused: at most MaxReviewItems, each page an existing
// wiki page, each kind one of ReviewKinds, each detail at most
// MaxReviewDetail bytes.
func (r *run) checkReview(items []plan.ReviewItem) ([]plan.ReviewItem, []string) {
	var keep []plan.ReviewItem
	var refused []string
	if len(items) > MaxReviewItems {
		refused = append(refused, fmt.Sprintf("the answer holds %d review items; the first %d are kept (at most %d an answer)", len(items), MaxReviewItems, MaxReviewItems))
		items = items[:MaxReviewItems]
	}
	for i, it := range items {
		if it.Kind != "" && !contains(ReviewKinds, it.Kind) {
			refused = append(refused, fmt.Sprintf("item %d: kind %q is none of %s", i+1, short(it.Kind), strings.Join(ReviewKinds, ", ")))
			continue
		}
		if len(it.Detail) > MaxReviewDetail {
			refused = append(refused, fmt.Sprintf("item %d: its detail is %d bytes, more than %d", i+1, len(it.Detail), MaxReviewDetail))
			continue
		}
		if it.Page != "" {
			rel, err := r.reviewPage(it.Page)
			if err != nil {
				refused = append(refused, fmt.Sprintf("item %d: page %q: %v", i+1, short(it.Page), err))
				continue
			}
			it.Page = rel
		}
		keep = append(keep, it)
	}
	return keep, refused
}

// reviewPage resolves a review item's page: a wiki path of an existing page.
func (r *run) reviewPage(p string) (string, error) {
	if strings.Contains(p, ":") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return "", fmt.Errorf("not a page path under the wiki root")
	}
	rel, err := wikiPath(p)
	if err != nil {
		return "", err
	}
	if _, ok, err := r.tx.Page(rel); err != nil || !ok {
		return "", fmt.Errorf("no such page")
	}
	return rel, nil
}
