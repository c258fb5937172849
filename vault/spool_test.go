package vault

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// stageAll is a Stage function putting every file of files as a node file.
func stageAll(files map[string]string, after func(*Staged)) func(*Staged) error {
	return func(s *Staged) error {
		for p, c := range files {
			if err := s.PutNode(p, []byte(c)); err != nil {
				return err
			}
		}
		if after != nil {
			after(s)
		}
		return nil
	}
}

// TestAStagedWriteChecksOutFromItsSpool: the working-tree files of a
// staged write are its spool files renamed into place, on the road that
// stages whole directories (a first write) and on the one-at-a-time road
// (files changed in directories that exist); two paths with the same
// content take the spool file once and the store for the other; the index
// stat data matches the files and nothing is left in .prose/tmp. With the
// spool files gone before the checkout, the files come from the store.
func TestAStagedWriteChecksOutFromItsSpool(t *testing.T) {
	first := map[string]string{}
	for i := range 60 {
		first[fmt.Sprintf("d%d/page-%02d.html", i%3, i)] = fmt.Sprintf("<p>page %d %s</p>", i, strings.Repeat("x", i))
	}
	first["twin/a.html"] = "<p>same</p>"
	first["twin/b.html"] = "<p>same</p>"
	second := map[string]string{}
	for i := 0; i < 60; i += 2 {
		second[fmt.Sprintf("d%d/page-%02d.html", i%3, i)] = fmt.Sprintf("<p>changed %d</p>", i)
	}
	for _, gone := range []bool{false, true} {
		v := newVault(t)
		var after func(*Staged)
		if gone {
			after = func(s *Staged) {
				if err := s.wait(); err != nil { // every put made
					t.Fatal(err)
				}
				if err := os.RemoveAll(s.b.sources.spool.dir); err != nil {
					t.Fatal(err)
				}
			}
		}
		want := map[string]string{}
		for r, round := range []map[string]string{first, second} {
			v.stagedDirs.Store(0)
			v.filesOneByOne.Store(0)
			v.filesSpooled.Store(0)
			if _, err := v.WriteNode(context.Background(), "notes", nil, WriteOptions{Stage: stageAll(round, after)}); err != nil {
				t.Fatal(err)
			}
			for p, c := range round {
				want[p] = c
			}
			spooled, staged, one := v.filesSpooled.Load(), v.stagedDirs.Load(), v.filesOneByOne.Load()
			wantSpooled := int64(len(round))
			if r == 0 {
				wantSpooled-- // the twins' second path
			}
			if gone {
				wantSpooled = 0
			}
			if spooled != wantSpooled {
				t.Fatalf("gone %v round %d: %d files from the spool, want %d", gone, r, spooled, wantSpooled)
			}
			if r == 0 && (staged == 0 || one != 0) || r == 1 && one != int64(len(round)) {
				t.Fatalf("gone %v round %d: %d directories staged, %d files one by one", gone, r, staged, one)
			}
			checkWorktreeHolds(t, v, "notes", want, "")
			checkIndexStat(t, v)
			checkNoTemps(t, v)
			checkGitClean(t, v)
		}
	}
}

// TestAStagedWriteKeepsTheOrderOfItsPuts: the puts and removals of a
// staged write take effect in the order they were made, though a worker
// makes them (a path put, removed and put again holds the last content),
// and an error of a put the worker made after the call returned (a JSON
// file that does not parse) fails the write, which then moves nothing.
func TestAStagedWriteKeepsTheOrderOfItsPuts(t *testing.T) {
	v := newVault(t)
	_, err := v.WriteNode(context.Background(), "notes", nil, WriteOptions{Stage: func(s *Staged) error {
		for i := range 40 {
			p := fmt.Sprintf("p%02d.html", i%5)
			var err error
			if i%3 == 2 {
				err = s.RemoveNode(p)
			} else {
				err = s.PutNode(p, fmt.Appendf(nil, "<p>%d</p>", i))
			}
			if err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range 40 {
		p := fmt.Sprintf("p%02d.html", i%5)
		if i%3 == 2 {
			delete(want, p)
		} else {
			want[p] = fmt.Sprintf("<p>%d</p>", i)
		}
	}
	checkWorktreeHolds(t, v, "notes", want, "")
	for i := range 5 {
		p := fmt.Sprintf("p%02d.html", i)
		if _, ok := want[p]; !ok {
			if _, err := os.Stat(v.Root() + "/published/notes/" + p); err == nil {
				t.Fatalf("%s was removed last but is in the working tree", p)
			}
		}
	}
	tip, _, err := v.NodeHead("notes")
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.WriteNode(context.Background(), "notes", nil, WriteOptions{Stage: func(s *Staged) error {
		if err := s.PutNode("bad.json", []byte("{")); err != nil {
			return err
		}
		for i := range 10 {
			s.PutNode(fmt.Sprintf("q%d.html", i), []byte("<p>q</p>")) // may return the error
		}
		return nil
	}})
	if err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("a staged put that fails: %v", err)
	}
	if after, _, _ := v.NodeHead("notes"); after != tip {
		t.Fatal("the failed write moved the branch")
	}
	checkNoTemps(t, v)
}
