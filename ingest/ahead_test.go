package ingest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/vault"
)

// publishedTree is the hash of the published/ tree of commit.
func publishedTree(t *testing.T, v *vault.Vault, commit string) string {
	t.Helper()
	c := commitObject(t, v, commit)
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	e, err := tree.FindEntry("published")
	if err != nil {
		t.Fatal(err)
	}
	return e.Hash.String()
}

// linkedDocs are sources that define the same terms, link each other
// and name each other's titles: what one source's pages say depends on
// the others, so a turn that saw what an earlier source wrote would show.
func linkedDocs(t *testing.T, round int) []*source.Document {
	var docs []*source.Document
	for i := range 9 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Service %d guide\n\nSee [the next guide](svc-%d.md#setup) and the **Rollback** notes.\n\n", i, (i+1)%9)
		fmt.Fprintf(&sb, "## Setup\n\nInstall service %d, round %d.\n\n", i, round)
		sb.WriteString("## Glossary\n\n- **Rollback**: undoing a release of service " + fmt.Sprint(i) + "\n- **Canary**: a first small release\n\n")
		if i%2 == 0 {
			sb.WriteString("## Restart steps\n\n1. Drain the node.\n2. Restart the node.\n\n")
		}
		d := readDoc(t, fmt.Sprintf("svc-%d.md", i), sb.String())
		d.Collection = true
		docs = append(docs, d)
	}
	return docs
}

// TestWorkingAheadChangesNothing: a run works the next source's
// analysis and rendering while the one before it is written; the
// wiki it makes is the wiki made working each source in its turn, for a
// first ingest and for one over pages the sources made before.
func TestWorkingAheadChangesNothing(t *testing.T) {
	run := func(ahead bool) (first, second string, taken int64) {
		*ingest.WorkAhead = ahead
		defer func() { *ingest.WorkAhead = true }()
		before := ingest.TakenAhead.Load()
		v, w := newWiki(t)
		r1 := ingestDocs(t, w, linkedDocs(t, 1)...)
		r2 := ingestDocs(t, w, linkedDocs(t, 2)...)
		return publishedTree(t, v, r1.Commit), publishedTree(t, v, r2.Commit), ingest.TakenAhead.Load() - before
	}
	a1, a2, taken := run(true)
	s1, s2, none := run(false)
	if taken != 16 || none != 0 {
		t.Fatalf("sources taken from working ahead: %d with it on (want 16: all but the first of each run), %d with it off", taken, none)
	}
	if a1 != s1 || a2 != s2 {
		t.Errorf("published trees worked ahead %s, %s; in turn %s, %s", a1, a2, s1, s2)
	}
}
