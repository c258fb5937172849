package ingest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/model"
)

// quoting is a model that quotes tokens into what goes to review: it
// writes a slot a person changed (so its text becomes a kept-edit
// proposal) and asks for review with a detail, page and kind holding them.
type quoting struct{ path, slot, html, review string }

func (q quoting) Name() string { return "quoting" }

func (q quoting) Call(_ context.Context, req model.Request) (model.Response, error) {
	if len(req.Messages) > 1 {
		return model.Response{Text: "Done.\n<<<REVIEW_QUEUE>>>" + q.review + "<<<END>>>", StopReason: model.StopEnd}, nil
	}
	args, _ := json.Marshal(map[string]string{"path": q.path, "slot": q.slot, "html": q.html})
	return model.Response{ToolCalls: []model.ToolCall{{ID: "c1", Name: "write_slot", Arguments: args}}, StopReason: model.StopToolUse}, nil
}

// TestTheCommittedReviewQueueIsRedacted: a model that quotes a key-shaped
// token (sk-…) and the configured key's literal (a token of no known
// shape) into a kept-edit proposal and into a review item's detail
// commits a review queue holding neither; the items are filed, redacted
// (an item's page and kind are checked when the model answers: only an
// existing page and a known kind are filed). A configured placeholder key of a few characters is no secret
// and leaves words alone.
func TestTheCommittedReviewQueueIsRedacted(t *testing.T) {
	const configured = "ZZTOKEN123456"
	const shaped = "sk-proj-abcdefghijklmnop123"
	t.Setenv("OPENAI_API_KEY", configured)
	t.Setenv("ANTHROPIC_API_KEY", "x")
	v, w := newWiki(t)
	const page = "glossary/canary.html"
	ingestDocs(t, w, readDoc(t, "deploy.md", deployV1))
	writeSlot(t, w, page, "summary", "<p>Watched for ten minutes.</p>")

	review, _ := json.Marshal([]map[string]string{{
		"page":   page,
		"kind":   "check",
		"detail": "The key " + configured + " and " + shaped + " were in the notes; rotate them (exactly as written).",
	}})
	m := quoting{page, "summary", "<p>Use " + configured + " or " + shaped + " to deploy.</p>", string(review)}
	o := opts(m)
	o.ModelSpec = "quoting"
	res, err := ingest.Enrich(context.Background(), w, ingest.Selection{Pages: []string{page}}, o)
	if err != nil {
		t.Fatal(err)
	}
	queue, err := os.ReadFile(filepath.Join(v.Root(), ingest.ReviewFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{configured, shaped, "abcdefghijklmnop"} {
		if strings.Contains(string(queue), leak) {
			t.Errorf("the committed review queue holds %q:\n%s", leak, queue)
		}
		for _, it := range res.Review {
			if strings.Contains(it.Detail+it.Proposed+it.Page+it.Kind, leak) {
				t.Errorf("the run's review items hold %q: %+v", leak, it)
			}
		}
	}
	it := keptItem(t, v, page, "summary")
	if !strings.Contains(it.Proposed, "<p>Use [REDACTED] or ") || !strings.Contains(it.Proposed, " to deploy.</p>") {
		t.Errorf("kept-edit proposal: %q", it.Proposed)
	}
	found := false
	for _, e := range openReview(t, v) {
		if strings.Contains(e.Detail, "were in the notes; rotate them (exactly as written).") {
			found = true
			if !strings.Contains(e.Detail, "The key [REDACTED] and ") || strings.Contains(e.Page, "ZZ") {
				t.Errorf("review item: %+v", e)
			}
		}
	}
	if !found {
		t.Fatalf("the model's review item was not filed: %+v", openReview(t, v))
	}
}
