package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/model"
)

func TestRel(t *testing.T) {
	for _, tt := range []struct{ from, to, want string }{
		{"a/b.html", "a/c.html", "c.html"},
		{"a/b.html", "d/c.html", "../d/c.html"},
		{"b.html", "d/c.html", "d/c.html"},
		{"a/x/b.html", "a/c.html", "../c.html"},
		{"a/b.html", "c.html", "../c.html"},
	} {
		if got := rel(tt.from, tt.to); got != tt.want {
			t.Errorf("rel(%s, %s) = %s, want %s", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestLinkify(t *testing.T) {
	links := []plan.Link{{Path: "ops/canary.html", Title: "Canary"}, {Path: "ops/roll.html", Title: "Rollback"}}
	got := linkify("Start the canary, then canary again; no rollbacks <here>.", "ops/x.html", links)
	want := `Start the <a href="canary.html">canary</a>, then canary again; no rollbacks &lt;here&gt;.`
	if got != want {
		t.Errorf("linkify = %s\nwant     %s", got, want)
	}
}

func TestMentions(t *testing.T) {
	for _, tt := range []struct {
		text, title string
		want        bool
	}{
		{"the SEV1 page", "sev1", true},
		{"the SEV10 page", "sev1", false},
		{"a canary-release", "canary", true},
		{"abc", "abc", false}, // too short to match
		{"Ünïcode Tërm here", "ünïcode tërm", true},
	} {
		if got := mentions(tt.text, tt.title); got != tt.want {
			t.Errorf("mentions(%q, %q) = %v", tt.text, tt.title, got)
		}
	}
}

// sentencesByExpression is sentences as first written, with a regular
// expression: the byte scan must split exactly as it did.
func sentencesByExpression(text string) []string {
	end := regexp.MustCompile(`([.!?])\s+`)
	var out []string
	for _, para := range strings.Split(text, "\n\n") {
		para = stripRole(strings.Join(strings.Fields(para), " "))
		for _, s := range strings.SplitAfter(end.ReplaceAllString(para, "$1\n"), "\n") {
			if s = strings.TrimSpace(s); len(s) > 20 {
				out = append(out, s)
			}
		}
	}
	return out
}

func FuzzSentences(f *testing.F) {
	for _, s := range []string{
		"User: How do I roll back? First stop the deploy. Then run the rollback!  Done.\n\nA second paragraph, long enough to count. Short.",
		"Ellipses... and?! odd\tspacing.\nnew line. Ünïcödé sentence ends here. «Quoted.» Next one follows here.",
		"no end at all but long enough to be a sentence",
		"", ".", "a. b. c.", "Assistant: fine. Go on then, further and further.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, want := sentences(text), sentencesByExpression(text)
		if !slices.Equal(got, want) {
			t.Fatalf("sentences(%q)\n = %q\nwant %q", text, got, want)
		}
	})
}

// A page title is linked in text, never inside code or a source's link.
func TestLinkifySkipsCodeAndLinks(t *testing.T) {
	links := []plan.Link{{Path: "ops/canary.html", Title: "Canary"}}
	got := linkify("Run `canary <x>` or [canary docs](<https://example.com/c>), then the canary.", "ops/x.html", links)
	want := `Run <code>canary &lt;x&gt;</code> or <a href="https://example.com/c">canary docs</a>, then the <a href="canary.html">canary</a>.`
	if got != want {
		t.Errorf("linkify = %s\nwant     %s", got, want)
	}
}

// TestCountWordsAsTheWordSlice checks countWords against the count it
// replaced: the joined texts lower-cased whole and split into a slice of
// every word.
func TestCountWordsAsTheWordSlice(t *testing.T) {
	for _, tt := range []struct {
		texts []string
		words []string
	}{
		{[]string{"Deploy the Canary; canary, CANARY-release.", "Canary Guide"}, []string{"canary", "guide", "release", "deploy"}},
		{[]string{"ends with guide", "guide"}, []string{"guide"}}, // a word at the end of each text
		{[]string{"Straße STRASSE straße", "İstanbul istanbul"}, []string{"straße", "strasse", "istanbul", "i̇stanbul"}},
		{[]string{"v2 release2 2release", "Release2"}, []string{"release2", "v2", "release"}},
		{[]string{"", ""}, []string{"empty"}},
		{[]string{"bad \xff\xfebytes here", "bytes"}, []string{"bytes", "bad"}},
		{[]string{"Ünïcode tërm, ünïcode-tërm", "Tërm"}, []string{"tërm", "ünïcode"}},
	} {
		want := map[string]int{}
		for _, w := range tt.words {
			want[w] = 0
		}
		for _, w := range strings.FieldsFunc(strings.ToLower(strings.Join(tt.texts, " ")), func(r rune) bool { return !isWordRune(r) }) {
			if _, ok := want[w]; ok {
				want[w]++
			}
		}
		got := map[string]int{}
		for _, w := range tt.words {
			got[w] = 0
		}
		countWords(got, tt.texts...)
		for _, w := range tt.words {
			if got[w] != want[w] {
				t.Errorf("%q: %q counted %d times, want %d", tt.texts, w, got[w], want[w])
			}
		}
		if len(got) != len(tt.words) {
			t.Errorf("%q: counted words it was not asked for: %v", tt.texts, got)
		}
	}
}

// TestSourcePageLinksTheIndexPagesItsTextNames: the source page's plan
// links every existing page whose title its text names, and only those,
// the same on a second call that quotes the same source (the candidates
// are kept with the parsed source).
func TestSourcePageLinksTheIndexPagesItsTextNames(t *testing.T) {
	named := []string{"Canary Release", "Rollback Plan", "Feature Flags", "Error Budget", "Load Shedding", "Circuit Breaker"}
	var index []IndexEntry
	var text strings.Builder
	text.WriteString("# Deploy guide\n\n")
	for i, title := range named {
		index = append(index, IndexEntry{Path: "ops/" + plan.Slug(title) + ".html", Title: title, Template: "concept"})
		fmt.Fprintf(&text, "Paragraph %d says little words first, then names the %s once.\n\n", i, strings.ToLower(title))
	}
	index = append(index, IndexEntry{Path: "ops/unnamed-page.html", Title: "Unnamed Page", Template: "concept"})
	idx, err := json.Marshal(index)
	if err != nil {
		t.Fatal(err)
	}
	prompt := `<source name="guides/deploy.md" id="blake3:1" kind="markdown">` + "\n" + text.String() + "\n</source>\n" +
		plan.Field("index", string(idx)) + "\n" + plan.Field("tree", `["ops"]`)
	for call := 1; call <= 2; call++ {
		resp, err := Engine{}.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText(prompt)}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Parse(resp.Text)
		if err != nil {
			t.Fatal(err)
		}
		var links []string
		for _, pg := range p.Pages {
			if pg.Template == "source" {
				for _, l := range pg.Links {
					links = append(links, l.Title)
				}
			}
		}
		slices.Sort(links)
		want := slices.Clone(named)
		slices.Sort(want)
		if !slices.Equal(links, want) {
			t.Errorf("call %d: the source page links %q, want %q", call, links, want)
		}
	}
	// The same source with another index plans against that index.
	idx2, _ := json.Marshal(index[1:])
	prompt2 := strings.Replace(prompt, string(idx), string(idx2), 1)
	resp, err := Engine{}.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText(prompt2)}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(resp.Text)
	if err != nil {
		t.Fatal(err)
	}
	for _, pg := range p.Pages {
		for _, l := range pg.Links {
			if l.Title == named[0] {
				t.Errorf("with %s gone from the index, %s still links it", named[0], pg.Path)
			}
		}
	}
}

// TestMentionsOfFindsTheSentencesThatUseATerm: the sentences quoted as a
// term's mentions are found through the index of the source's terms'
// words, for a term the source defines and for one it does not.
func TestMentionsOfFindsTheSentencesThatUseATerm(t *testing.T) {
	md := "# Deploy guide\n\n## Glossary\n\n- **Error budget**: the failures a quarter may spend.\n\n## Practice\n\n" +
		"The team spends the error budget slowly during a freeze. Load shedding keeps the queue short under pressure. " +
		"Nobody mentions it here at all in this sentence. When the error budget is gone, deploys stop until it is back.\n"
	prompt := `<source name="guides/deploy.md" id="blake3:2" kind="markdown">` + "\n" + md + "\n</source>\n"
	w, err := readWorkspace(prompt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		term string
		want []string
	}{
		{"Error budget", []string{"The team spends the error budget slowly during a freeze.", "When the error budget is gone, deploys stop until it is back."}},
		{"Load shedding", []string{"Load shedding keeps the queue short under pressure."}},
	} {
		if got := w.mentionsOf(tt.term, "the failures a quarter may spend"); !slices.Equal(got, tt.want) {
			t.Errorf("mentionsOf(%q) = %q, want %q", tt.term, got, tt.want)
		}
	}
}

// A page links a title only where its text says the title's phrase, word
// for word between non-word characters: a title of one word where the
// word is said, a title of several words not where its words are said
// apart or in another order, and not inside a longer word.
func TestLinkNeedsTheTitlesPhrase(t *testing.T) {
	w := &workspace{index: []IndexEntry{
		{Path: "g/queue.html", Title: "Queue"},
		{Path: "g/drain-window.html", Title: "Drain window"},
		{Path: "g/window-drain.html", Title: "Window drain"},
		{Path: "g/backlog.html", Title: "Backlog"},
		{Path: "g/budget-rule.html", Title: "Budget rule"},
		{Path: "g/node.html", Title: "Node"},
	}}
	cs := []candidate{
		{page: plan.Page{Path: "src/guide.html", Title: "Guide"}, kind: "definition", text: "the guide"},
		{page: plan.Page{Path: "src/term.html", Title: "Term"}, kind: "definition",
			text: "Set the drain window before the queue grows; a window opens and a drain follows. The budget, as a rule, holds; the nodes restart."},
	}
	w.link(cs)
	var got []string
	for _, l := range cs[1].page.Links {
		got = append(got, l.Path)
	}
	want := []string{"src/guide.html", "g/queue.html", "g/drain-window.html"}
	if !slices.Equal(got, want) {
		t.Fatalf("links %v, want %v", got, want)
	}
}

// distinctWordsBefore is distinctWords as it was before it read ASCII
// bytes by a table: strings.FieldsFuncSeq split at what isWordRune is not.
// The reference the byte loop must match.
func distinctWordsBefore(lower string) []string {
	var out []string
	seen := map[string]bool{}
	for word := range strings.FieldsFuncSeq(lower, func(r rune) bool { return !isWordRune(r) }) {
		if !seen[word] {
			seen[word] = true
			out = append(out, strings.Clone(word))
		}
	}
	return out
}

func TestDistinctWordsAsFieldsFunc(t *testing.T) {
	parts := []string{"a", "b", "Z", "9", " ", "-", "_", ".", "é", "ß", "٣", "\u00a0", "\u2003", "\xff", "\xe2", "\x80", "字", "İ", "\x00", "\x7f", "word", "word "}
	r := rand.New(rand.NewSource(3))
	for n := 0; n < 50000; n++ {
		var sb strings.Builder
		for k := r.Intn(16); k > 0; k-- {
			sb.WriteString(parts[r.Intn(len(parts))])
		}
		s := sb.String()
		if got, want := distinctWords(s), distinctWordsBefore(s); !slices.Equal(got, want) {
			t.Fatalf("distinctWords(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzDistinctWords(f *testing.F) {
	f.Add("deploy the canary, canary-release 2 v2 \xff straße")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := distinctWords(s), distinctWordsBefore(s); !slices.Equal(got, want) {
			t.Fatalf("distinctWords(%q) = %q, want %q", s, got, want)
		}
	})
}
