package wiki_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/internal/testknob"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// spillCorpus is the fixtures' sources and notes of about 8 KB in topic
// folders, with headings, steps and terms the notes share: a run that
// writes source pages, section pages, term pages and folder indexes.
func spillCorpus(t *testing.T) []*source.Document {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "notes")
	topics := []string{"billing", "search", "storage"}
	for i := range 24 {
		topic := topics[i%len(topics)]
		var sb strings.Builder
		fmt.Fprintf(&sb, "# %s note %d\n\n", topic, i)
		for sec := 0; sb.Len() < 8000; sec++ {
			fmt.Fprintf(&sb, "## %s part %d\n\n", topic, sec)
			for p := range 3 {
				fmt.Fprintf(&sb, "The %s service of note %d keeps part %d, paragraph %d, in order. %s\n\n", topic, i, sec, p, strings.Repeat("It says more. ", 15))
			}
			fmt.Fprintf(&sb, "- **%s term %d**: what the %s team calls step %d.\n\n1. First.\n2. Then.\n\n", topic, sec%4, topic, sec)
		}
		p := filepath.Join(dir, topic, fmt.Sprintf("note-%02d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inputs, _, err := source.Collect([]string{"../fixtures/sources", dir}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var docs []*source.Document
	for _, in := range inputs {
		d, err := source.Read(in.Name, in.Data, in.Kind)
		if err != nil {
			t.Fatal(err)
		}
		d.Collection = in.Found
		docs = append(docs, d)
	}
	return docs
}

// TestIngestThatSpillsCommitsTheSameTree: an ingest whose Tx spills its
// pages to a file (every page, or past 64 KB) commits the tree of one
// that holds them all in memory, to the byte.
func TestIngestThatSpillsCommitsTheSameTree(t *testing.T) {
	ingestTree := func(spill int) string {
		t.Helper()
		defer testknob.SetSpillBytes(spill)()
		v, err := vault.Init(filepath.Join(t.TempDir(), "vault"), vault.InitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		w, err := wiki.Open(v)
		if err != nil {
			t.Fatal(err)
		}
		day := func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
		w.Now = day
		before := wiki.SpilledPages()
		res, err := ingest.Ingest(context.Background(), w, spillCorpus(t), ingest.Options{Model: offline.Engine{}, ModelSpec: "offline", Now: day})
		if err != nil {
			t.Fatal(err)
		}
		spilled := wiki.SpilledPages() - before
		if res.Status != "rendered" || len(res.Created) < 30 {
			t.Fatalf("spill past %d: status %s, %d pages created", spill, res.Status, len(res.Created))
		}
		if (spill > 0) != (spilled > 0) {
			t.Fatalf("spill past %d: %d pages spilled", spill, spilled)
		}
		repo, err := git.PlainOpen(v.Root())
		if err != nil {
			t.Fatal(err)
		}
		c, err := repo.CommitObject(plumbing.NewHash(res.Commit))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("spill past %d bytes: %d pages created, %d spilled, tree %s", spill, len(res.Created), spilled, c.TreeHash)
		return c.TreeHash.String()
	}
	held := ingestTree(0)
	for _, spill := range []int{1, 64 << 10} {
		if got := ingestTree(spill); got != held {
			t.Errorf("spilling past %d bytes committed tree %s, holding the pages %s", spill, got, held)
		}
	}
}
