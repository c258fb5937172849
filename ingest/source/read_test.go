package source

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// outline is what a golden file records of a document: everything but the
// bytes.
func outline(d *Document) []byte {
	v := *d
	v.Data = nil
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

func TestReadFixtures(t *testing.T) {
	inputs, skipped, err := Collect([]string{"../../fixtures/sources"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 0 || len(inputs) != 3 {
		t.Fatalf("Collect: %d inputs, skipped %v", len(inputs), skipped)
	}
	for _, in := range inputs {
		d, err := Read(in.Name, in.Data, "")
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", filepath.Base(in.Name)+".golden.json")
		got := outline(d)
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: outline differs from %s:\n%s", in.Name, golden, got)
		}
	}
}

// find returns the first block of kind k.
func first(d *Document, k BlockKind) *Block {
	for i := range d.Sections {
		for j := range d.Sections[i].Blocks {
			if d.Sections[i].Blocks[j].Kind == k {
				return &d.Sections[i].Blocks[j]
			}
		}
	}
	return nil
}

func TestStructure(t *testing.T) {
	tests := []struct {
		name, src string
		title     string
		kind      BlockKind
		items     []string
		defs      []Definition
	}{
		{"steps.md", "# Setup\n\n1. Install it.\n2. Run it.\n", "Setup", Steps, []string{"Install it.", "Run it."}, nil},
		{"list.md", "# L\n\n- one thing\n- two things\n", "L", List, []string{"one thing", "two things"}, nil},
		{"defs.md", "# G\n\n- **Vault**: a git repository prose writes.\n- **Receipt**: the record of one wake.\n", "G",
			Definitions, nil, []Definition{{Term: "Vault", Meaning: "a git repository prose writes."}, {Term: "Receipt", Meaning: "the record of one wake."}}},
		{"deflist.md", "# G\n\nVault\n: a git repository prose writes\n", "G", Definitions, nil, []Definition{{Term: "Vault", Meaning: "a git repository prose writes"}}},
		{"glossary.md", "# G\n\n| Term | Meaning |\n|---|---|\n| Canary | a first small share of traffic |\n", "G",
			Definitions, nil, []Definition{{Term: "Canary", Meaning: "a first small share of traffic"}}},
		{"notes.txt", "Field notes\n\nWe met on Monday.\n\n1. Buy milk\n2. Call Ann\n", "Field notes", Steps, []string{"Buy milk", "Call Ann"}, nil},
		{"under.txt", "Big Title\n=========\n\n- a b\n- c d\n", "Big Title", List, []string{"a b", "c d"}, nil},
		{"page.html", "<title>T | Site</title><nav><p>Home</p></nav><main><h1>H</h1><ol><li>First <b>step</b></li><li>Second</li></ol></main><script>alert(1)</script>",
			"T", Steps, []string{"First step", "Second"}, nil},
		{"dl.html", "<body><h1>D</h1><dl><dt>Scribe</dt><dd>keeps the timeline</dd></dl></body>", "D", Definitions, nil, []Definition{{Term: "Scribe", Meaning: "keeps the timeline"}}},
		{"chat.jsonl", "{\"role\":\"user\",\"content\":\"What is a canary? Tell me.\"}\n{\"role\":\"assistant\",\"content\":\"1. Ship to 5%.\\n2. Watch.\"}\n",
			"What is a canary?", Steps, []string{"Ship to 5%.", "Watch."}, nil},
		{"chat.json", `{"title":"Talk","messages":[{"role":"user","content":[{"type":"text","text":"Hi there."}]}]}`, "Talk", Turn, nil, nil},
	}
	for _, tt := range tests {
		d, err := Read(tt.name, []byte(tt.src), "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if d.Title != tt.title {
			t.Errorf("%s: title %q, want %q", tt.name, d.Title, tt.title)
		}
		b := first(d, tt.kind)
		if b == nil {
			t.Errorf("%s: no %s block in %s", tt.name, tt.kind, outline(d))
			continue
		}
		if tt.items != nil && !reflect.DeepEqual(b.Items, tt.items) {
			t.Errorf("%s: items %q, want %q", tt.name, b.Items, tt.items)
		}
		if tt.defs != nil && !reflect.DeepEqual(b.Defs, tt.defs) {
			t.Errorf("%s: defs %q, want %q", tt.name, b.Defs, tt.defs)
		}
	}
}

func TestHTMLDropsChrome(t *testing.T) {
	src := `<html><head><title>P</title><style>.x{}</style></head><body>
<header>Site banner</header><nav>Menu link</nav><div class="sidebar">Side stuff</div>
<main><p>Real content here.</p><script>evil()</script></main><footer>Copyright</footer></body></html>`
	d, err := Read("p.html", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	prose := d.Prose()
	if prose != "Real content here." {
		t.Errorf("prose = %q", prose)
	}
}

func TestRedaction(t *testing.T) {
	src := "# Keys\n\nexport OPENAI_API_KEY=sk-proj-abcdefghijklmnop123\n\nAPI key: the string a provider issues.\n"
	d, err := Read("keys.md", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Redactions != 1 || strings.Contains(string(d.Data), "sk-proj") || strings.Contains(string(outline(d)), "sk-proj") {
		t.Errorf("redactions %d, data %q", d.Redactions, d.Data)
	}
	if !strings.Contains(string(d.Data), "API key: the string") {
		t.Errorf("a definition was redacted: %q", d.Data)
	}
}

func TestReadRefuses(t *testing.T) {
	for name, src := range map[string]string{
		"bin.md":    "abc\x00def",
		"undef.txt": "caf\x81", // 0x81: no character in Windows-1252 either
		"x.json":    `{"not": "a conversation"}`,
		"bad.json":  `[{"role": "user", "content": "x"`,
	} {
		if _, err := Read(name, []byte(src), ""); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestCollectWalk(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "# A\n")
	write("sub/b.txt", "B\n")
	write(".git/c.md", "# hidden\n")
	write("image.png", "\x89PNG")
	write("locked.md", "# L\n")
	if err := os.Chmod(filepath.Join(dir, "locked.md"), 0); err != nil {
		t.Fatal(err)
	}
	inputs, skipped, err := Collect([]string{dir, "-"}, strings.NewReader("from stdin"), "Piped")
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(dir)
	var names []string
	for _, in := range inputs {
		names = append(names, in.Name)
	}
	want := []string{base + "/a.md", base + "/sub/b.txt", "Piped"}
	if os.Geteuid() != 0 {
		want = []string{base + "/a.md", base + "/sub/b.txt", "Piped"}
	}
	if !reflect.DeepEqual(names, want) && !reflect.DeepEqual(names, []string{base + "/a.md", base + "/locked.md", base + "/sub/b.txt", "Piped"}) {
		t.Errorf("inputs %q, want %q", names, want)
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Path] = s.Reason
	}
	if !strings.Contains(reasons[base+"/image.png"], "not a supported source type") {
		t.Errorf("skipped %v", skipped)
	}
	if os.Geteuid() != 0 && !strings.Contains(reasons[base+"/locked.md"], "permission denied") {
		t.Errorf("unreadable file not reported: %v", skipped)
	}
	if _, _, err := Collect([]string{filepath.Join(dir, "missing.md")}, nil, ""); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing source: %v", err)
	}
}

func TestLeadingSentences(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"One. Two. Three.", 2, "One. Two."},
		{"Use e.g. this. Then that.", 1, "Use e.g. this."},
		{"No end", 1, "No end"},
		{"Version 2.14 ships. Next.", 1, "Version 2.14 ships."},
	}
	for _, tt := range tests {
		if got := LeadingSentences(tt.in, tt.n); got != tt.want {
			t.Errorf("LeadingSentences(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestMarkdownRoundTrip: the Markdown a prompt quotes reads back to the
// same structure.
func TestMarkdownRoundTrip(t *testing.T) {
	inputs, _, err := Collect([]string{"../../fixtures/sources"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		d, err := Read(in.Name, in.Data, "")
		if err != nil {
			t.Fatal(err)
		}
		back, err := Read("x.md", []byte(d.Markdown()), Markdown)
		if err != nil {
			t.Fatal(err)
		}
		if back.Title != d.Title {
			t.Errorf("%s: title %q, back %q", in.Name, d.Title, back.Title)
		}
		for _, k := range []BlockKind{Steps, Definitions, Table, Code} {
			if a, b := count(d, k), count(back, k); a != b {
				t.Errorf("%s: %d %s blocks, %d after the round trip\n%s", in.Name, a, k, b, d.Markdown())
			}
		}
		if !reflect.DeepEqual(d.Definitions(), back.Definitions()) {
			t.Errorf("%s: definitions differ after the round trip", in.Name)
		}
	}
}

func count(d *Document, k BlockKind) int {
	n := 0
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.Kind == k {
				n++
			}
		}
	}
	return n
}

// Walking a vault (`prose ingest .` at its root) leaves out what the vault
// writes: its published pages, stored sources and manifests. A directory of
// the same name elsewhere, or outside a vault, is walked.
func TestCollectSkipsTheVaultsOwnDirectories(t *testing.T) {
	root := t.TempDir()
	for p, c := range map[string]string{
		"prose.yaml":                 "hash: blake3\n",
		".git/HEAD":                  "ref: refs/heads/main\n",
		"published/wiki/a/page.html": "<html></html>",
		"sources/abc.md":             "# stored\n",
		"dist/manifest.active.json":  "{}",
		"notes/mine.md":              "# mine\n",
		"notes/published/x.md":       "# not the vault's\n",
	} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inputs, skipped, err := Collect([]string{root}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range inputs {
		names = append(names, in.Name[strings.IndexByte(in.Name, '/')+1:])
	}
	if got := strings.Join(names, " "); got != "notes/mine.md notes/published/x.md" {
		t.Fatalf("sources found: %s", got)
	}
	managed := 0
	for _, s := range skipped {
		if strings.Contains(s.Reason, "the vault's own") {
			managed++
		}
	}
	if managed != 3 {
		t.Fatalf("skipped %v; want published/, sources/ and dist/ named as the vault's own", skipped)
	}
}

// A source past MaxSize is refused with the fix; one at the limit reads.
func TestReadRefusesASourcePastTheLimit(t *testing.T) {
	at := append([]byte("# Long\n\n"), bytes.Repeat([]byte("word "), (MaxSize-8)/5)...)
	if _, err := Read("at.md", at, ""); err != nil {
		t.Fatalf("a source of %d bytes: %v", len(at), err)
	}
	past := append(at, bytes.Repeat([]byte("x"), MaxSize+1-len(at))...)
	_, err := Read("past.md", past, "")
	if err == nil || !strings.Contains(err.Error(), "past.md") || !strings.Contains(err.Error(), "split it") {
		t.Fatalf("a source of %d bytes: %v; want it refused, naming it and the fix", len(past), err)
	}
}

// A term may hold literal braces (an API's `{id}`, a template's `{name}`):
// the list stays a definition list, every term and the braces kept.
func TestDefinitionTermsKeepBraces(t *testing.T) {
	d, err := Read("b.md", []byte("# API\n\n- **{id}**: the record's identifier.\n- **Brace {term}**: means x here.\n- **Gizmo**: a device.\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.Kind == Definitions {
				for _, df := range b.Defs {
					terms = append(terms, df.Term)
				}
			}
		}
	}
	if got := strings.Join(terms, " | "); got != "{id} | Brace {term} | Gizmo" {
		t.Fatalf("definition terms: %q", got)
	}
}

// A JSON object laid out over several lines that is no transcript is named
// as such (it was read as JSON Lines: "invalid JSON at byte 1"); a single
// message on one or several lines is a transcript of one message.
func TestConversationOfOneObject(t *testing.T) {
	_, err := Read("x.json", []byte("{\n \"foo\": 1\n}\n"), "")
	if err == nil || !strings.Contains(err.Error(), "not a conversation transcript") {
		t.Fatalf("pretty-printed non-transcript: %v", err)
	}
	for _, src := range []string{`{"role": "user", "content": "hello there"}`, "{\n  \"role\": \"user\",\n  \"content\": \"hello there\"\n}\n"} {
		d, err := Read("one.jsonl", []byte(src), "")
		if err != nil || !strings.Contains(d.Prose(), "hello there") {
			t.Fatalf("%q: %v", src, err)
		}
	}
}

// TestWideTablesStayWithinBounds: a table header thousands of columns wide
// over rows of one cell is padded by the Markdown parser to width × rows
// cells; past a bound the source's tables are read as text, so reading
// costs what the source's size says. A table of ordinary size stays a table.
func TestWideTablesStayWithinBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Wide\n\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "| c%d ", i)
	}
	b.WriteString("|\n" + strings.Repeat("|-", 5000) + "|\n")
	for range 300 {
		b.WriteString("| x |\n")
	}
	src := []byte(b.String())
	d, err := Read("wide.md", src, "")
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown()
	if len(md) > 8*len(src) || !strings.Contains(md, "c4999") {
		t.Fatalf("a %d-byte source with a 5000-column table quotes as %d bytes (c4999 kept: %v)", len(src), len(md), strings.Contains(md, "c4999"))
	}
	small, err := Read("small.md", []byte("# Small\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, s := range small.Sections {
		for _, bl := range s.Blocks {
			if bl.Kind == Table {
				tables++
			}
		}
	}
	if tables != 1 {
		t.Fatalf("a two-column table read as %d tables", tables)
	}
}

// A line of a text's own markup (AsciiDoc's include::FILE[], an anchor
// REMOTES[[REMOTES]]) is no title and no heading: the title comes from the
// file name and the line stays in the text as written.
func TestTextDirectiveIsNoTitle(t *testing.T) {
	d, err := Read("urls-remotes.txt", []byte("include::urls.txt[]\n\nREMOTES[[REMOTES]]\n\nThe name of a remote can be used instead of a URL.\n\nNAMED REMOTES\n\nA remote in the configuration file.\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Urls remotes" {
		t.Errorf("title %q, want the file name's", d.Title)
	}
	var headings []string
	for _, s := range d.Sections {
		if s.Heading != "" {
			headings = append(headings, s.Heading)
		}
	}
	if strings.Join(headings, "|") != "NAMED REMOTES" {
		t.Errorf("headings %q, want only NAMED REMOTES", headings)
	}
	if text := d.Prose(); !strings.Contains(text, `include::urls.txt\[\]`) || !strings.Contains(text, `REMOTES\[\[REMOTES\]\]`) {
		t.Errorf("the directives left the text:\n%s", text)
	}
}

// A Doxygen page has no <title> and no <h1>: its title is its header's
// (without the "abstract" label), and a code fragment (a <div
// class="line"> a line) is one code block, its lines kept.
func TestDoxygenTitleAndFragments(t *testing.T) {
	page := `<html><head><meta name="generator" content="Doxygen"/></head><body>
<div class="header"><div class="headertitle"><div class="title">Gear::Box Class Reference<span class="mlabels"><span class="mlabel">abstract</span></span></div></div></div>
<div class="contents"><h2 class="groupheader">Detailed Description</h2><p>Usage:</p>
<div class="fragment"><div class="line"><span class="keyword">using namespace</span> Gear;</div>
<div class="line">  Box b;</div>
<div class="line">  b.<a class="code" href="x.html">turn</a>(3);</div></div></div></body></html>`
	d, err := Read("class_gear_box.html", []byte(page), "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Gear::Box Class Reference" {
		t.Errorf("title %q", d.Title)
	}
	var code []string
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.Kind == Code {
				code = append(code, b.Text)
			}
		}
	}
	if want := "using namespace Gear;\n  Box b;\n  b.turn(3);"; len(code) != 1 || code[0] != want {
		t.Errorf("code blocks %q, want one: %q", code, want)
	}
}

// AsciiDoc as plain text (git's *.txt manuals): a listing or literal
// block between two equal delimiter lines is one code block, kept as it
// is — none of its lines becomes a heading, its closing delimiter no
// underline ("HEAD is now at 427abfa Linux v2.6.17" over the listing's
// end had become a section page) — and a one-line title ("== Usage") is
// a heading of its level, the anchor line above it its name and an
// attribute line markup, not text. An underline longer than its title
// stays one, and a listing of one line is a block whose delimiters may
// be as long as the line.
func TestAsciiDocBlocksAndTitlesInPlainText(t *testing.T) {
	text := "git-switch(1)\n=============\n\nNAME\n----\ngit-switch - Switch branches\n\n[[detached-head]]\n== Detached heads\n\nYou can check out a tag:\n\n[source,shell]\n" +
		"------------------------------------------------\n$ git switch --detach v2.6.17\nNote: checking out 'v2.6.17'.\n\nHEAD is now at 427abfa Linux v2.6.17\n------------------------------------------------\n\n" +
		"....\nliteral   text\n....\n\nUsage\n---------------\n\ntext after.\n\nOther\n---------------\n\nmore text.\n\n------------------------------------------------\n$ git am --continue\n------------------------------------------------\n\n-------------------\n$ git show 18449ab0\n-------------------\n"
	d, err := Read("git-switch.txt", []byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	var heads []string
	var code []string
	for _, s := range d.Sections {
		if s.Heading != "" {
			heads = append(heads, fmt.Sprintf("%d:%s", s.Level, s.Heading))
		}
		for _, b := range s.Blocks {
			if b.Kind == Code {
				code = append(code, b.Text)
			}
		}
	}
	if got, want := strings.Join(heads, "|"), "1:git-switch(1)|2:NAME|2:Detached heads|2:Usage|2:Other"; got != want {
		t.Errorf("headings %q, want %q", got, want)
	}
	for _, s := range d.Sections {
		if s.Heading == "Detached heads" && !reflect.DeepEqual(s.IDs, []string{"detached-head"}) {
			t.Errorf("the anchor line above a title names it: IDs %q", s.IDs)
		}
	}
	if strings.Contains(d.Markdown(), "[source") || strings.Contains(d.Markdown(), "[[detached") {
		t.Errorf("an attribute or anchor line was kept as text:\n%s", d.Markdown())
	}
	want := []string{"$ git switch --detach v2.6.17\nNote: checking out 'v2.6.17'.\n\nHEAD is now at 427abfa Linux v2.6.17", "literal   text", "$ git am --continue", "$ git show 18449ab0"}
	if !reflect.DeepEqual(code, want) {
		t.Errorf("code blocks %q, want %q", code, want)
	}
}
