package mergefile

import (
	"bytes"
	"fmt"
	"path"
	"strings"
)

// Which side a choice takes.
const (
	Ours   = "ours"
	Theirs = "theirs"
)

// Result is the outcome of a merge of one file.
type Result struct {
	// Merged is the merged file. Where Conflicts remain it holds ours'
	// side of each of them (a caller that stops on a conflict writes
	// nothing of it).
	Merged []byte
	// Removed says the merge removes the file (Merged is then nil).
	Removed bool
	// Conflicts are the changes both sides made differently.
	Conflicts []Conflict
	// Handled is false for a path these rules do not know: Merged and
	// Conflicts are then empty and the caller merges the file its way.
	Handled bool
}

// Conflict is one change both sides made differently.
type Conflict struct {
	Path string // the file, as given to Merge
	Slot string // the slot both sides changed ("" when not a slot)
	Key  string // the meta key both sides set differently, or a record's id
	// Kind is what conflicts: "slot", "meta", "removed" (removed on one
	// side and changed on the other), "page" (a side is not a page prose
	// can read), "record" (a record of a catalog or queue file).
	Kind   string
	Detail string // one sentence for a person
}

// ID names the conflict within its file, the way a choice names it:
// "slot:ID", "meta:KEY", "record:KEY", or the kind alone.
func (c Conflict) ID() string {
	switch {
	case c.Slot != "":
		return "slot:" + c.Slot
	case c.Key != "" && c.Kind == "meta":
		return "meta:" + c.Key
	case c.Key != "":
		return "record:" + c.Key
	}
	return c.Kind
}

func (c Conflict) String() string {
	what := c.Path
	switch {
	case c.Slot != "":
		what += " slot " + c.Slot
	case c.Key != "":
		what += " " + c.Kind + " " + c.Key
	}
	return what + ": " + c.Detail
}

// Chooser decides a conflict: Ours, Theirs, or "" to leave it a conflict.
type Chooser func(Conflict) string

// Merge merges the file at path (a vault path, slash-separated) three
// ways. A nil slice is a file absent on that side (base nil: added on
// both sides); an empty non-nil slice is an empty file.
func Merge(path string, base, ours, theirs []byte) (Result, error) {
	return MergeChoosing(path, base, ours, theirs, nil)
}

// MergeChoosing is Merge with each conflict settled by choose where it
// says a side; what it leaves undecided stays in Result.Conflicts.
func MergeChoosing(p string, base, ours, theirs []byte, choose Chooser) (Result, error) {
	kind := kindOf(p)
	if kind == kindUnknown {
		return Result{}, nil
	}
	if kind == kindPage && !isPage(base) && !isPage(ours) && !isPage(theirs) {
		return Result{}, nil // an HTML file under the wiki prose does not own
	}
	if choose == nil {
		choose = func(Conflict) string { return "" }
	}
	// The whole-file rules come first: they make merge(b, x, x) = x and
	// merge(b, b, x) = x hold byte for byte.
	switch {
	case same(ours, theirs), same(base, theirs):
		return whole(ours), nil
	case same(base, ours):
		return whole(theirs), nil
	}
	if ours == nil || theirs == nil {
		// Removed on one side, changed on the other.
		side := Theirs
		if theirs == nil {
			side = Ours
		}
		c := Conflict{Path: p, Kind: "removed", Detail: fmt.Sprintf("removed on one side, changed on the other (%s kept it)", side)}
		switch choose(c) {
		case Ours:
			return whole(ours), nil
		case Theirs:
			return whole(theirs), nil
		}
		r := whole(ours)
		r.Conflicts = []Conflict{c}
		return r, nil
	}
	switch kind {
	case kindPage:
		return mergePage(p, base, ours, theirs, choose)
	case kindReview:
		return mergeReview(p, base, ours, theirs, choose)
	case kindCatalog:
		return mergeCatalog(p, base, ours, theirs, choose)
	case kindPages:
		return mergePageTable(p, base, ours, theirs, choose)
	}
	return Result{}, nil
}

// whole is a side taken as it is (nil: removed).
func whole(b []byte) Result {
	if b == nil {
		return Result{Removed: true, Handled: true}
	}
	return Result{Merged: b, Handled: true}
}

// same compares two sides, absence included.
func same(a, b []byte) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return bytes.Equal(a, b)
}

type fileKind int

const (
	kindUnknown fileKind = iota
	kindPage
	kindReview
	kindCatalog
	kindPages
)

// The paths these rules know (ingest's names; the package does not
// import ingest, which sits above it).
const (
	WikiDir     = "published/wiki/"
	ReviewFile  = "review/queue.json"
	CatalogFile = "sources/index.json"
	PagesDir    = "sources/pages/"
)

func kindOf(p string) fileKind {
	switch {
	case strings.HasPrefix(p, WikiDir) && strings.HasSuffix(p, ".html"):
		return kindPage
	case p == ReviewFile:
		return kindReview
	case p == CatalogFile:
		return kindCatalog
	case strings.HasPrefix(p, PagesDir) && path.Ext(p) == ".tsv" && !strings.Contains(p[len(PagesDir):], "/"):
		return kindPages
	}
	return kindUnknown
}

// Handles reports whether Merge has rules for the file at path (a page
// path may still turn out to be a file prose does not own).
func Handles(path string) bool { return kindOf(path) != kindUnknown }
