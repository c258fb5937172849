package wiki

import (
	"context"
	"strings"
	"testing"
)

// generatedOf returns the page's KeyGenerated record.
func generatedRecord(t *testing.T, w *Wiki, name string) map[string]any {
	t.Helper()
	_, p, err := w.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := p.Meta[KeyGenerated].(map[string]any)
	return rec
}

// TestLinkRewritesKeepTheGeneratedRecord: when mv rewrites the links of
// the moved page and of the pages linking to it, and rm --unlink those of
// the pages linking to a removed page, a slot whose KeyGenerated record
// matched it before matches it after (the wiki's own rewrite is no
// person's edit), and a slot a person had changed still reads as changed.
func TestLinkRewritesKeepTheGeneratedRecord(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "ml/intro", "note", nil)
	newPage(t, w, "ml/gone", "note", nil)
	pipeline := `<p>See <a href="intro.html">the intro</a> and <a href="gone.html">this</a>.</p>`
	person := `<p>Mine: <a href="intro.html">intro</a>.</p>`
	mustUpdate(t, w, func(tx *Tx) error {
		if _, _, err := tx.New("ml/attention", NewOptions{Template: "concept", Slots: map[string]string{"summary": pipeline, "body": person}}); err != nil {
			return err
		}
		if _, _, err := tx.New("ml/user", NewOptions{Template: "note", Slots: map[string]string{"body": `<p>Uses <a href="attention.html">attention</a>.</p>`}}); err != nil {
			return err
		}
		// summary is as the pipeline left it; body was changed since.
		_, err := tx.SetMeta("ml/user", map[string]any{KeyGenerated: map[string]any{"body": SlotToken(`<p>Uses <a href="attention.html">attention</a>.</p>`)}}, nil)
		if err != nil {
			return err
		}
		_, err = tx.SetMeta("ml/attention", map[string]any{KeyGenerated: map[string]any{"summary": SlotToken(pipeline), "body": SlotToken("<p>What the pipeline wrote.</p>")}}, nil)
		return err
	})
	mustUpdate(t, w, func(tx *Tx) error {
		_, _, _, err := tx.Move("ml/attention", "core/attention")
		return err
	})
	summary, _ := w.SlotOf("core/attention", "summary")
	body, _ := w.SlotOf("core/attention", "body")
	if !strings.Contains(summary, `href="../ml/intro.html"`) || !strings.Contains(body, `href="../ml/intro.html"`) {
		t.Fatalf("mv did not rewrite the moved page's links: %q %q", summary, body)
	}
	rec := generatedRecord(t, w, "core/attention")
	if rec["summary"] != SlotToken(summary) {
		t.Errorf("the pipeline's summary reads as changed after mv: record %v", rec["summary"])
	}
	if rec["body"] != SlotToken("<p>What the pipeline wrote.</p>") {
		t.Errorf("the person's body no longer reads as changed: record %v", rec["body"])
	}
	user, _ := w.SlotOf("ml/user", "body")
	if !strings.Contains(user, `href="../core/attention.html"`) || generatedRecord(t, w, "ml/user")["body"] != SlotToken(user) {
		t.Errorf("a page linking to the moved page: %q, record %v", user, generatedRecord(t, w, "ml/user"))
	}

	mustUpdate(t, w, func(tx *Tx) error {
		_, _, err := tx.Remove("ml/gone", true)
		return err
	})
	summary, _ = w.SlotOf("core/attention", "summary")
	if strings.Contains(summary, "gone.html") || generatedRecord(t, w, "core/attention")["summary"] != SlotToken(summary) {
		t.Errorf("after rm --unlink: %q, record %v", summary, generatedRecord(t, w, "core/attention")["summary"])
	}
	rep, _ := w.Lint(context.Background(), nil)
	if rep.Count(SevError) > 0 {
		t.Errorf("lint: %+v", rep.Findings)
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
}

// TestRelinkHTML: text kept outside the wiki for a page follows a move of
// the page and of the pages it links to, and loses the links to a removed
// page.
func TestRelinkHTML(t *testing.T) {
	in := `<p><a href="intro.html">intro</a>, <a href="attention.html#x">self</a>, <a href="gone.html">gone</a>, <a href="https://example.com/">out</a></p>`
	got := RelinkHTML(in, "ml/attention.html", "core/attention.html", map[string]string{"ml/attention.html": "core/attention.html"}, map[string]bool{"ml/gone.html": true})
	want := `<p><a href="../ml/intro.html">intro</a>, <a href="attention.html#x">self</a>, gone, <a href="https://example.com/">out</a></p>`
	if got != want {
		t.Fatalf("RelinkHTML:\n got %s\nwant %s", got, want)
	}
}
