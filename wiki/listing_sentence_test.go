package wiki

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// sentenceBefore is sentence as it was, converting the whole text to
// runes to cut it.
func sentenceBefore(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '.' || c == '?' || c == '!' || c == ':' && i >= 20 {
			if i+1 == len(s) {
				break
			}
			if s[i+1] == ' ' && i+2 < len(s) {
				r, _ := utf8.DecodeRuneInString(s[i+2:])
				if unicode.IsUpper(r) && !abbreviation(s[:i]) {
					s = s[:i+1]
					break
				}
			}
		}
	}
	if r := []rune(s); len(r) > 160 {
		cut := string(r[:160])
		if j := strings.LastIndexByte(cut, ' '); j > 80 {
			cut = cut[:j]
		}
		s = strings.TrimRight(cut, " ,;:") + "…"
	}
	return s
}

// TestSentenceAsBefore: the lead sentence of texts short and long, of
// several scripts, with invalid UTF-8 around the cut, is what it was.
func TestSentenceAsBefore(t *testing.T) {
	texts := []string{"", "One. Two.", "e.g. this. That", strings.Repeat("word ", 40), strings.Repeat("wörd ", 40) + ". X",
		strings.Repeat("語", 200), strings.Repeat("a", 159) + "é" + "bbb", strings.Repeat("a ", 79) + "\xff\xfe" + strings.Repeat("b", 90),
		strings.Repeat("x", 158) + "\xe2\x82" + "yyyy", strings.Repeat("ab, ", 50), strings.Repeat("a", 160), strings.Repeat("a", 161)}
	for _, s := range texts {
		if got, want := sentence(s), sentenceBefore(s); got != want {
			t.Errorf("sentence(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzSentenceAsBefore(f *testing.F) {
	f.Add(strings.Repeat("wörd ", 40))
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := sentence(s), sentenceBefore(s); got != want {
			t.Fatalf("sentence(%q) = %q, want %q", s, got, want)
		}
	})
}

// leadBefore is Lead as it was: the first three paragraphs of a slot
// collected, each collapsed with strings.Fields, then the first that is
// not empty or the title taken.
func leadBefore(p *Page) string {
	title := strings.ToLower(strings.TrimRight(p.Meta.Title(), ".!?:; "))
	for _, s := range p.Slots {
		if s.ID == "citation" || s.ID == "nav" || !strings.Contains(s.HTML, "<p") {
			continue
		}
		for _, para := range paragraphsBefore(s.HTML, 3) {
			if t := strings.ToLower(strings.TrimRight(para, ".!?:; ")); t == "" || t == title {
				continue
			}
			return sentenceBefore(para)
		}
	}
	return ""
}

func paragraphsBefore(s string, n int) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(s))
	depth, inLink := 0, 0
	links, loose := false, false
	var b strings.Builder
	for len(out) < n {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken:
			switch name, _ := z.TagName(); string(name) {
			case "p":
				depth++
				b.Reset()
				links, loose, inLink = false, false, 0
			case "a":
				inLink++
				links = true
			}
		case html.EndTagToken:
			switch name, _ := z.TagName(); string(name) {
			case "p":
				if depth > 0 {
					depth--
					if !links || loose {
						out = append(out, strings.Join(strings.Fields(b.String()), " "))
					}
				}
			case "a":
				if inLink > 0 {
					inLink--
				}
			}
		case html.TextToken:
			if depth > 0 {
				t := z.Text()
				b.Write(t)
				if inLink == 0 && strings.TrimFunc(string(t), func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) != "" {
					loose = true
				}
			}
		}
	}
	return out
}

// leadPages are pages around each rule of Lead: the title as the first
// paragraph, empty ones, a row of links, a fourth paragraph, a citation
// slot, a slot without paragraphs, text with runs of white space.
func leadPages() []*Page {
	long := strings.Repeat("The worker drains the queue, nightly ", 10)
	return []*Page{
		{Meta: Meta{"title": "Queue"}, Slots: []Slot{{ID: "body", HTML: "<p>Queue.</p><p>The queue holds work. It grows.</p>"}}},
		{Meta: Meta{"title": "Q"}, Slots: []Slot{{ID: "body", HTML: "<p> </p><p><a href=x>GoDoc</a> <a href=y>CI</a></p><p>\n  Real   text\there. More.</p>"}}},
		{Meta: Meta{"title": "Q"}, Slots: []Slot{{ID: "body", HTML: "<p></p><p>;</p><p>Q</p><p>Fourth paragraph.</p>"}}},
		{Meta: Meta{"title": "Q"}, Slots: []Slot{{ID: "citation", HTML: "<p>Cited.</p>"}, {ID: "nav", HTML: "<p>Nav.</p>"}, {ID: "summary", HTML: "<ul><li>x</li></ul>"}, {ID: "body", HTML: "<p>" + long + "</p>"}}},
		{Meta: Meta{"title": "Q"}, Slots: []Slot{{ID: "body", HTML: "<p>See <a href=x>the guide</a> for more: it is long.</p>"}}},
		{Meta: Meta{"title": "Q"}, Slots: []Slot{{ID: "a", HTML: "<p>Q</p>"}, {ID: "b", HTML: "<p><p>Nested</p> tail</p>"}}},
		{Meta: Meta{}, Slots: nil},
	}
}

// TestLeadAsBefore: Lead, taking the first paragraph that serves as it
// reads them, gives the lead the collect-then-choose way gave.
func TestLeadAsBefore(t *testing.T) {
	nonEmpty := 0
	for i, p := range leadPages() {
		got, want := Lead(p), leadBefore(p)
		if got != want {
			t.Errorf("page %d: Lead %q, want %q", i, got, want)
		}
		if got != "" {
			nonEmpty++
		}
	}
	if nonEmpty < 5 {
		t.Fatalf("only %d pages have a lead", nonEmpty)
	}
}
