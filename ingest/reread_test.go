package ingest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// rereadSources writes the fixtures' sources and two notes, the later
// linking to a section of the earlier (an anchor the earlier must keep
// once it let go of its sections), into a directory of their own.
func rereadSources(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kb")
	files := map[string]string{
		"a-first.md":  "# First\n\nThe first note.\n\n## Details\n\nWhat the first note details.\n\n## More\n\nMore of it.\n",
		"b-second.md": "# Second\n\nThe second note, which points to [the details](a-first.md#details).\n\n## Part\n\nA part of it.\n",
	}
	for _, f := range []string{"canary-debugging.json", "deploy-guide.md", "incident-glossary.html"} {
		data, err := os.ReadFile(filepath.Join("../fixtures/sources", f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(data)
	}
	for name, text := range files {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readSources reads the files of dir as the CLI does; with reload, each
// document lets go of its bytes and reads its file again when needed
// (counted in reads; then read, when set, is called with the count).
func readSources(t *testing.T, dir string, reload bool, reads *atomic.Int64, read func(int64)) []*source.Document {
	t.Helper()
	inputs, _, err := source.Collect([]string{dir}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	chrome := source.FindBoilerplate(inputs)
	var docs []*source.Document
	for _, in := range inputs {
		d, err := source.ReadWith(in.Name, in.Data, in.Kind, chrome[in.Collection])
		if err != nil {
			t.Fatal(err)
		}
		d.Collection = in.Found
		if reload && d.Redactions == 0 && d.Encoding == "" {
			p := in.Path
			d.Reload = func() ([]byte, error) {
				data, err := os.ReadFile(p)
				if n := reads.Add(1); read != nil {
					read(n)
				}
				return data, err
			}
			d.Data = nil
		}
		docs = append(docs, d)
	}
	return docs
}

// ingestMoved ingests docs into a fresh vault while another writer
// commits between the run's preparing and its commit, so the run
// prepares again. It returns the tree the run committed.
func ingestMoved(t *testing.T, docs []*source.Document) (string, error) {
	t.Helper()
	v, w := newWiki(t)
	attempts := 0
	o := opts(offline.Engine{})
	o.Fail = func(step string) error {
		if step != "commit" {
			return nil
		}
		if attempts++; attempts == 1 {
			other, err := wiki.Open(v)
			if err != nil {
				return err
			}
			tx, err := other.Begin(context.Background())
			if err != nil {
				return err
			}
			if _, _, err := tx.New("elsewhere/meanwhile", wiki.NewOptions{Template: "note"}); err != nil {
				return err
			}
			if _, err := tx.Commit(); err != nil {
				return err
			}
		}
		return nil
	}
	res, err := ingest.Ingest(context.Background(), w, docs, o)
	if err != nil {
		return "", err
	}
	if attempts != 2 {
		t.Fatalf("%d attempts, want a second after the vault moved", attempts)
	}
	return commitTree(t, v, res.Commit), nil
}

func commitTree(t *testing.T, v *vault.Vault, commit string) string {
	t.Helper()
	return commitObject(t, v, commit).TreeHash.String()
}

// commitObject is the commit of v's repository named commit.
func commitObject(t *testing.T, v *vault.Vault, commit string) *object.Commit {
	t.Helper()
	repo, err := git.PlainOpen(v.Root())
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestIngestReadsReleasedSourcesAgain: a run lets go of each source's
// sections once its turn is over; when it prepares again (the vault
// moved), it reads each file again and commits the tree of a run that
// held every source's text, the anchor one source links to in another
// kept. A file changed in between is refused, naming it, and nothing is
// committed.
func TestIngestReadsReleasedSourcesAgain(t *testing.T) {
	dir := rereadSources(t)
	held, err := ingestMoved(t, readSources(t, dir, false, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	docs := readSources(t, dir, true, &reads, nil)
	released, err := ingestMoved(t, docs)
	if err != nil {
		t.Fatal(err)
	}
	if released != held {
		t.Errorf("a run that read its sources again committed tree %s, one that held them %s", released, held)
	}
	// Each file is read again to be stored by the first attempt's commit
	// (which lost the race), to be parsed by the second attempt and to be
	// stored by its commit.
	if n := reads.Load(); n != 3*int64(len(docs)) {
		t.Errorf("%d files read %d times, want %d", len(docs), n, 3*len(docs))
	}
	for _, d := range docs {
		if !d.Released() || d.Sections != nil {
			t.Errorf("%s holds its sections after the run", d.Name)
		}
	}

	// Changed once the first attempt's commit read every file: the
	// second attempt finds it changed when it reads it again.
	reads.Store(0)
	n := int64(len(docs))
	_, err = ingestMoved(t, readSources(t, dir, true, &reads, func(read int64) {
		if read == n {
			if err := os.WriteFile(filepath.Join(dir, "a-first.md"), []byte("# First\n\nRewritten meanwhile.\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}))
	if !errors.Is(err, source.ErrChanged) || !strings.Contains(err.Error(), "a-first.md") {
		t.Fatalf("a source changed between the attempts: %v, want ErrChanged naming it", err)
	}
}
