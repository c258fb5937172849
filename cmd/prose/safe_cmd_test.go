package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawControls are characters a terminal acts on, as the bytes that would
// reach it: ESC, BEL, a carriage return alone, the bidi override U+202E,
// the C1 CSI U+009B, and the 8-bit CSI byte alone.
var rawControls = []string{"\x1b", "\x07", "\r", "\u202e", "\u009b", "\x9b"}

func assertTerminalSafe(t *testing.T, what, text string) {
	t.Helper()
	for _, c := range rawControls {
		if strings.Contains(text, c) {
			t.Errorf("%s prints %q raw:\n%q", what, c, text)
		}
	}
}

// TestControlCharactersNeverReachTheTerminal: a source titled with an OSC
// sequence ("\x1b]0;pwned\a"), a bidi override and a C1 control, with ESC
// sequences in its text and in a file name, is ingested; no human-readable
// output — ingest's lines and stderr, wiki tree, find, search, read, meta,
// slot listings, review list and show, an error quoting an argument —
// carries those characters raw: they are shown escaped (\x1b, \u202e).
// --json output is JSON, whose strings give the characters back.
func TestControlCharactersNeverReachTheTerminal(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "src")
	evil := "# Evil \x1b]0;pwned\x07 title \u202e reversed \u009b31m\n\nThe \x1b[2J body mentions pwned things.\r Canary: a \x1b[31m red word.\n"
	writeFiles(t, src, map[string]string{
		"evil.md":             evil,
		"\x1b]0;named\x07.md": "# Named\n\nA source whose file name holds an OSC sequence.\n",
		"\x1b[31mpicture.png": "\x89PNG",
	})
	var all strings.Builder
	run := func(args ...string) (string, string, int) {
		t.Helper()
		out, errs, code := prose(t, append([]string{"--vault", dir}, args...)...)
		assertTerminalSafe(t, strings.Join(args, " "), out+errs)
		all.WriteString(out + errs)
		return out, errs, code
	}
	if _, errs, code := run("ingest", src); code != 0 {
		t.Fatalf("ingest: exit %d\n%s", code, errs)
	}
	out, _, _ := run("--json", "wiki", "search", "pwned")
	var pages struct {
		Hits []struct{ Path, Title string }
	}
	if err := json.Unmarshal([]byte(out), &pages); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var page string
	for _, p := range pages.Hits {
		if strings.HasPrefix(p.Title, "Evil \x1b]0;pwned\x07 title \u202e reversed") {
			page = p.Path
		}
	}
	if page == "" {
		t.Fatalf("--json lost the title's characters: %s", out)
	}
	run("wiki", "tree")
	run("wiki", "find", "**")
	run("wiki", "search", "pwned")
	run("wiki", "read", page)
	run("wiki", "meta", page)
	run("wiki", "list-slots", page)
	run("wiki", "index", filepath.Dir(page))
	if _, errs, code := run("wiki", "read", "\x1b]0;nosuch\x07"); code == 0 || !strings.Contains(errs, "nosuch") {
		t.Errorf("an error quoting the argument: exit %d\n%q", code, errs)
	}
	bin := filepath.Join(t.TempDir(), "\x1b]0;binary\x07.md")
	os.WriteFile(bin, []byte("\x00\x01"), 0o644)
	if _, errs, code := run("ingest", bin); code != 1 || !strings.Contains(errs, `\x1b]0;binary\x07.md: not text`) {
		t.Errorf("an error naming a source: exit %d\n%q", code, errs)
	}
	// Kept edits put the evil text into the review queue: every slot of
	// the source's pages written by hand, then the source changed.
	for _, p := range pages.Hits {
		out, _, _ := prose(t, "--vault", dir, "--json", "wiki", "list-slots", p.Path)
		var slots struct {
			Slots []struct {
				ID    string
				Empty bool
			}
		}
		json.Unmarshal([]byte(out), &slots)
		for _, sl := range slots.Slots {
			if !sl.Empty {
				run("wiki", "write-slot", p.Path, sl.ID, "--content", "<p>Mine.</p>")
			}
		}
	}
	os.WriteFile(filepath.Join(src, "evil.md"), []byte(strings.Replace(evil, "pwned things", "pwned things again \x1b[5m", 1)), 0o644)
	run("ingest", src)
	out, _, _ = run("wiki", "review", "list")
	ids := strings.Fields(out)
	if len(ids) == 0 || !strings.HasPrefix(ids[0], "r") {
		t.Fatalf("no review item listed:\n%s", out)
	}
	out, _, _ = run("wiki", "review", "show", ids[0])
	if !strings.Contains(out, `\x1b]0;pwned\x07`) {
		t.Errorf("review show: the proposed text with its escape sequence is not shown:\n%s", out)
	}
	if !strings.Contains(all.String(), `\x1b]0;pwned\x07`) || !strings.Contains(all.String(), `\u202e`) {
		t.Fatalf("the escaped title was never shown:\n%s", all.String())
	}
}
