package source

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/prose-store/prose/canon"
)

// A source within MaxSize whose text escaping nearly doubles reads back
// from its quotation; the limit of a quotation is MaxQuoted, and a source
// whose outline would pass it is refused by name with the fix.
func TestQuotationOfASourceWithinTheLimitReadsBack(t *testing.T) {
	// -short reads back a 1 MiB source, whose outline also outgrows it;
	// the full run takes one at MaxSize, whose outline passes MaxSize.
	size, limit := MaxSize, MaxSize
	if testing.Short() {
		size = MaxSize / 16
		limit = size
	}
	var sb strings.Builder
	sb.WriteString("ASCII Art Gallery\n\n")
	for i := 0; sb.Len() < size-64; i++ {
		fmt.Fprintf(&sb, "*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_ art %d\n\n", i)
	}
	d, err := Read("ascii.txt", []byte(sb.String()), "")
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown()
	if len(md) <= limit {
		t.Fatalf("the outline is %d bytes; the test needs one past %d", len(md), limit)
	}
	back, err := ReadQuoted("source.md", []byte(md))
	if err != nil {
		t.Fatalf("the quotation of a %d-byte source (%d bytes): %v", sb.Len(), len(md), err)
	}
	if back.Title != d.Title || len(back.Sections) != len(d.Sections) || len(back.Sections[0].Blocks) != len(d.Sections[0].Blocks) ||
		back.Sections[0].Blocks[7].Text != d.Sections[0].Blocks[7].Text {
		t.Errorf("the quotation read back another document: %q, %d sections", back.Title, len(back.Sections))
	}

	past := append([]byte("# Big\n\n"), bytes.Repeat([]byte("word "), MaxQuoted/5)...)
	if _, err := ReadQuoted("source.md", past); err == nil || !strings.Contains(err.Error(), "quoted source") || !strings.Contains(err.Error(), fmt.Sprintf("%d MiB", MaxQuoted>>20)) {
		t.Errorf("a quotation of %d bytes: %v", len(past), err)
	}

	// A wide table of one-cell rows: every row written as wide as the
	// table, about three bytes a cell.
	var wide strings.Builder
	wide.WriteString("<title>Wide</title><table><tr>" + strings.Repeat("<th>a</th>", 2000) + "</tr>")
	for range MaxQuoted / 3 / 2000 {
		wide.WriteString("<tr><td>x</td></tr>")
	}
	wide.WriteString("</table>")
	_, err = Read("wide.html", []byte(wide.String()), "")
	if err == nil || !strings.Contains(err.Error(), "wide.html") || !strings.Contains(err.Error(), "split it") {
		t.Errorf("a %d-byte source whose outline passes %d bytes: %v", wide.Len(), MaxQuoted, err)
	}
}

// A quotation read back keeps its parsed text and its id, not a copy of
// the quotation: the offline engine keeps the read-back for the calls
// quoting a source, and a 16 MiB quotation held beside it was 16 MB more
// at the run's peak.
func TestReadQuotedKeepsNoCopyOfTheQuotation(t *testing.T) {
	d, err := Read("notes.md", []byte("# Notes\n\nThe first paragraph.\n\n## Part\n\n- one\n- two\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	md := []byte(d.Markdown())
	back, err := ReadQuoted("source.md", md)
	if err != nil {
		t.Fatal(err)
	}
	if back.Data != nil {
		t.Errorf("the read-back holds %d bytes of the quotation", len(back.Data))
	}
	if want := canon.BLAKE3.Token(md); back.ID != want {
		t.Errorf("the read-back's id is %q, want the quotation's %q", back.ID, want)
	}
	if back.Title != "Notes" || len(back.Sections) != 2 || len(back.Sections[1].Blocks) != 1 || back.Sections[1].Blocks[0].Kind != List {
		t.Errorf("the read-back is another document: %q, %d sections", back.Title, len(back.Sections))
	}
}

// Quote gives, between its open and close, the Markdown of the document
// ended by one newline, whatever newlines the Markdown ends in.
func TestQuoteIsTheMarkdownBetweenItsEnds(t *testing.T) {
	for name, src := range map[string]string{
		"notes.md":  "# Notes\n\nThe first paragraph.\n\n## Part\n\n- one\n- two\n",
		"code.md":   "# Code\n\n```\nline\n\n\n```\n",
		"plain.txt": "Plain\n\nA paragraph of text.\n",
		"page.html": "<title>Page</title><h1>Page</h1><p>Text.</p><pre>a\n\n</pre>",
	} {
		d, err := Read(name, []byte(src), "")
		if err != nil {
			t.Fatal(err)
		}
		checkQuote(t, name, d)
	}
	// A turn whose text ends in newlines: the Markdown ends in three.
	turn := &Document{Title: "Chat", Kind: Conversation, Sections: []Section{{Blocks: []Block{{Kind: Turn, Role: "user", Text: "hello\n\n"}}}}}
	if md := turn.Markdown(); !strings.HasSuffix(md, "\n\n") {
		t.Fatalf("the turn's Markdown %q should end in more than one newline", md)
	}
	checkQuote(t, "turn", turn)
}

func checkQuote(t *testing.T, name string, d *Document) {
	t.Helper()
	want := "<q>\n" + strings.TrimRight(d.Markdown(), "\n") + "\n</q>"
	if got := d.Quote("<q>\n", "</q>"); got != want {
		t.Errorf("%s: Quote gives\n%q\nwant\n%q", name, got, want)
	}
}
