package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// leafCommands lists the path of every command that runs an action.
func leafCommands(cmds []*cli.Command, path []string) [][]string {
	var out [][]string
	for _, c := range cmds {
		if c.Name == "help" {
			continue
		}
		p := append(append([]string{}, path...), c.Name)
		if len(c.Subcommands) > 0 {
			out = append(out, leafCommands(c.Subcommands, p)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// nullable are the fields whose null is a value, not an empty list: a
// receipt's prev is null in the receipt format when it is the first.
var nullable = map[string]bool{"prev": true}

// nullPaths lists where doc holds a null.
func nullPaths(doc any, at string) []string {
	switch d := doc.(type) {
	case nil:
		return []string{at}
	case map[string]any:
		var out []string
		for k, v := range d {
			if v == nil && nullable[k] {
				continue
			}
			out = append(out, nullPaths(v, at+"."+k)...)
		}
		return out
	case []any:
		var out []string
		for _, v := range d {
			out = append(out, nullPaths(v, at+"[]")...)
		}
		return out
	}
	return nil
}

// Every command given --json prints exactly one JSON document on stdout,
// a failure included ({"ok": false, "error": {code, message, hint}}, the
// sentence still on stderr), and no list in it is null.
func TestEveryCommandPrintsOneJSONDocument(t *testing.T) {
	needGit(t)
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"items/a.json": `{"n": 1}`})
	mustProse(t, "--vault", vdir, "publish", "node.one", src)
	mustProse(t, "--vault", vdir, "wiki", "new", "ops/canary", "--template", "note")
	// Arguments that take a command past its usage check to its output;
	// the others run bare and fail, which must print the error document.
	args := map[string][]string{
		"enrich":          {"--all"},
		"wiki read":       {"ops/canary"},
		"wiki meta":       {"ops/canary"},
		"wiki find":       {"*.md"},
		"wiki search":     {"canary"},
		"wiki list-slots": {"ops/canary"},
		"receipts list":   {},
		"diff":            {},
		"graph":           {},
		"id":              {"node.one"},
		"wiki lint":       {},
		"wiki rm":         {"no/such"},
	}
	var failures, successes int
	for _, path := range leafCommands(newApp(io.Discard, io.Discard).Commands, nil) {
		name := strings.Join(path, " ")
		line := append([]string{"--vault", vdir, "--json"}, path...)
		line = append(line, args[name]...)
		var out, errb bytes.Buffer
		stdin := os.Stdin
		if f, err := os.Open(os.DevNull); err == nil {
			os.Stdin = f
			defer f.Close()
		}
		code := run(append([]string{"prose"}, line...), &out, &errb)
		os.Stdin = stdin
		dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
		var doc any
		if err := dec.Decode(&doc); err != nil {
			t.Errorf("prose %s: exit %d, stdout is not one JSON document (%v):\n%s\nstderr: %s", strings.Join(line, " "), code, err, out.String(), errb.String())
			continue
		}
		if dec.More() {
			t.Errorf("prose %s: stdout holds more than one JSON document:\n%s", strings.Join(line, " "), out.String())
		}
		if code != 0 {
			failures++
			m, _ := doc.(map[string]any)
			e, _ := m["error"].(map[string]any)
			if m["ok"] != false || e == nil || e["code"] == "" || e["message"] == "" {
				if strings.Contains(errb.String(), "prose: ") {
					t.Errorf("prose %s: exit %d without the error document:\n%s", strings.Join(line, " "), code, out.String())
				}
				continue
			}
			if !strings.Contains(errb.String(), e["message"].(string)) {
				t.Errorf("prose %s: the error sentence %q is not on stderr: %s", strings.Join(line, " "), e["message"], errb.String())
			}
			continue
		}
		successes++
		if n := nullPaths(doc, "$"); len(n) > 0 {
			t.Errorf("prose %s: null in the JSON document at %v:\n%s", strings.Join(line, " "), n, out.String())
		}
	}
	if failures == 0 || successes == 0 {
		t.Errorf("%d commands failed, %d succeeded: the test reached one kind only", failures, successes)
	}
}
