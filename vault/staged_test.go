package vault

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestAStagedWriteIsTheWriteOfItsBytes: a WriteNode whose files are
// staged (WriteOptions.Stage: each blob written as it is put, only its id
// and sums kept) commits the same trees, fingerprints and version as the
// write given the same files as bytes, in a first write and in one that
// changes, adds and removes files beside files outside the node; and a
// path both staged and changed is refused, writing nothing.
func TestAStagedWriteIsTheWriteOfItsBytes(t *testing.T) {
	when := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return when }
	rounds := []struct {
		node  map[string][]byte
		files map[string][]byte
	}{{node: map[string][]byte{}, files: map[string][]byte{}}, {node: map[string][]byte{}, files: map[string][]byte{}}}
	for i := 0; i < 150; i++ {
		rounds[0].node[fmt.Sprintf("d%d/page-%03d.html", i%7, i)] = fmt.Appendf(nil, "<!doctype html><title>Page %d</title><p>%s</p>", i, strings.Repeat("text ", i))
		rounds[0].files[fmt.Sprintf("sources/src-%03d", i)] = fmt.Appendf(nil, "source %d", i)
	}
	rounds[0].node["meta/a.yaml"] = []byte("title: A\ntags: [x, y]\n")
	rounds[0].node["meta/b.json"] = []byte(`{"b": [1, 2, {"c": null}]}`)
	rounds[0].node["bin/blob"] = []byte{0xff, 0xfe, 0, 1, 2}
	for i := 0; i < 150; i += 3 {
		rounds[1].node[fmt.Sprintf("d%d/page-%03d.html", i%7, i)] = fmt.Appendf(nil, "<p>changed %d</p>", i)
		rounds[1].node[fmt.Sprintf("d%d/page-%03d.html", i%7, i+1)] = nil // removed
		rounds[1].node[fmt.Sprintf("new/page-%03d.html", i)] = fmt.Appendf(nil, "<p>new %d</p>", i)
	}
	rounds[1].node["meta/a.yaml"] = []byte("title: A again\n")
	rounds[1].files["review/queue.json"] = []byte(`{"items": []}`)
	plain, staged := newVault(t), newVault(t)
	for r, round := range rounds {
		want, err := plain.WriteNode(context.Background(), "notes", round.node, WriteOptions{Files: round.files, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		got, err := staged.WriteNode(context.Background(), "notes", nil, WriteOptions{Now: now, Stage: func(s *Staged) error {
			for p, data := range round.node {
				var err error
				if data == nil {
					err = s.RemoveNode(p)
				} else {
					err = s.PutNode(p, data)
				}
				if err != nil {
					return err
				}
			}
			for p, data := range round.files {
				if err := s.PutFile(p, data); err != nil {
					return err
				}
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		// The trees, not the commits: the two vaults' first commits were
		// made at other times.
		wc, err := plain.commit(want.Commit)
		if err != nil {
			t.Fatal(err)
		}
		gc, err := staged.commit(got.Commit)
		if err != nil {
			t.Fatal(err)
		}
		if wc.TreeHash != gc.TreeHash || want.Version != got.Version || !reflect.DeepEqual(want.Changed, got.Changed) {
			t.Fatalf("round %d: staged tree %s version %s (%d changed), want %s %s (%d)", r, gc.TreeHash, got.Version, len(got.Changed), wc.TreeHash, want.Version, len(want.Changed))
		}
		if want.Receipt == nil || got.Receipt == nil || !maps.Equal(want.Receipt.Fingerprints, got.Receipt.Fingerprints) {
			t.Fatalf("round %d: staged fingerprints %v, want %v", r, got.Receipt, want.Receipt)
		}
		// Each staged blob reads back from the store (the pack its
		// compressed bytes went into), not only from the working tree.
		for p, data := range round.node {
			if data == nil {
				continue
			}
			back, err := staged.blob(objectHash(plumbing.BlobObject, data))
			if err != nil || string(back) != string(data) {
				t.Fatalf("round %d: %s reads back from the store as %q (%v), want %q", r, p, back, err, data)
			}
		}
	}
	tip, _, err := staged.NodeHead("notes")
	if err != nil {
		t.Fatal(err)
	}
	_, err = staged.WriteNode(context.Background(), "notes", map[string][]byte{"x.html": []byte("<p>x</p>")}, WriteOptions{Now: now, Stage: func(s *Staged) error {
		return s.PutNode("x.html", []byte("<p>y</p>"))
	}})
	if err == nil || !strings.Contains(err.Error(), "both staged and changed") {
		t.Fatalf("a path both staged and changed: %v", err)
	}
	if after, _, _ := staged.NodeHead("notes"); after != tip {
		t.Fatal("the refused write moved the branch")
	}
}

// A write whose context is cancelled while it stages (Ctrl-C during a
// large ingest's commit) stops before it moves anything: it returns the
// context's error and the node's head stays where it was.
func TestAStagedWriteStopsWhenCancelledWhileStaging(t *testing.T) {
	v := newVault(t)
	first, err := v.WriteNode(context.Background(), "notes", map[string][]byte{"a.html": []byte("<p>a</p>")}, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = v.WriteNode(ctx, "notes", nil, WriteOptions{Stage: func(s *Staged) error {
		if err := s.PutNode("b.html", []byte("<p>b</p>")); err != nil {
			return err
		}
		cancel()
		return nil
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("write cancelled while staging: %v, want context.Canceled", err)
	}
	head, _, err := v.NodeHead("notes")
	if err != nil {
		t.Fatal(err)
	}
	if head != first.Commit {
		t.Fatalf("head %s after a cancelled write, want %s", head, first.Commit)
	}
}
