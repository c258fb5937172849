package ingest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

const deployV1 = "# Deploying the service\n\nWe deploy the service every Tuesday. The canary runs first.\n\n## Glossary\n\nCanary: a small slice of production traffic that sees a release first.\nRollback: returning production to the previous release.\n"

func ingestDocs(t *testing.T, w *wiki.Wiki, docs ...*source.Document) *ingest.Result {
	t.Helper()
	res, err := ingest.Ingest(context.Background(), w, docs, opts(offline.Engine{}))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func slotOf(t *testing.T, w *wiki.Wiki, page, slot string) string {
	t.Helper()
	h, err := w.SlotOf(page, slot)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func writeSlot(t *testing.T, w *wiki.Wiki, page, slot, html string) {
	t.Helper()
	if _, err := w.Update(context.Background(), func(tx *wiki.Tx) error {
		_, err := tx.WriteSlot(page, slot, html)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func openReview(t *testing.T, v *vault.Vault) []ingest.ReviewEntry {
	t.Helper()
	q, err := ingest.ReadReview(v)
	if err != nil {
		t.Fatal(err)
	}
	return q.Open(false)
}

// keptItem returns the one open kept-edit item for page and slot.
func keptItem(t *testing.T, v *vault.Vault, page, slot string) ingest.ReviewEntry {
	t.Helper()
	var found []ingest.ReviewEntry
	for _, it := range openReview(t, v) {
		if it.Kind == ingest.ReviewKept && it.Page == page && it.Slot == slot {
			found = append(found, it)
		}
	}
	if len(found) != 1 {
		t.Fatalf("open kept-edit items for %s %s: %+v (queue %+v)", page, slot, found, openReview(t, v))
	}
	return found[0]
}

// TestSlotWrittenByHandSurvivesReingest: a slot a person rewrote after
// ingest is not written over when its source changes; the run queues the
// text it would have written, the slots nobody touched are updated, and
// taking the proposal hands the slot back to the pipeline.
func TestSlotWrittenByHandSurvivesReingest(t *testing.T) {
	v, w := newWiki(t)
	const page = "glossary/canary.html"
	ingestDocs(t, w, readDoc(t, "deploy.md", deployV1))
	if !strings.Contains(slotOf(t, w, page, "summary"), "production traffic") {
		t.Fatalf("summary after the first ingest: %q", slotOf(t, w, page, "summary"))
	}
	human := "<p>The canary is what we watch for ten minutes before going on.</p>"
	writeSlot(t, w, page, "summary", human)

	v2 := strings.Replace(strings.Replace(deployV1, "production traffic", "live traffic", 1), "## Glossary", "## Terms", 1)
	d2 := readDoc(t, "deploy.md", v2)
	res := ingestDocs(t, w, d2)
	if got := slotOf(t, w, page, "summary"); got != human {
		t.Fatalf("the hand-written summary was overwritten: %q", got)
	}
	if body := slotOf(t, w, page, "body"); !strings.Contains(body, "“Terms”") {
		t.Fatalf("the body nobody touched was not updated: %q", body)
	}
	it := keptItem(t, v, page, "summary")
	if !strings.Contains(it.Proposed, "live traffic") || it.Source != "deploy.md" {
		t.Fatalf("kept-edit item: %+v", it)
	}
	if len(res.Review) == 0 || res.Review[len(res.Review)-1].ID != it.ID {
		t.Fatalf("the run did not report the item: %+v", res.Review)
	}
	_, p, err := w.Read(page)
	if err != nil {
		t.Fatal(err)
	}
	if srcs := p.Meta.Strings("sources"); len(srcs) != 1 || srcs[0] != d2.ID {
		t.Fatalf("sources = %v, want [%s]", srcs, d2.ID)
	}

	// The same source again: no second item for the same proposal.
	if _, err := ingest.Ingest(context.Background(), w, []*source.Document{d2}, func() ingest.Options { o := opts(offline.Engine{}); o.Force = true; return o }()); err != nil {
		t.Fatal(err)
	}
	keptItem(t, v, page, "summary")

	// Taking the proposal writes it, resolves the item, and makes the
	// slot the pipeline's again: the next change updates it.
	if _, _, err := ingest.Take(context.Background(), w, it.ID, "2026-12-01", false); err != nil {
		t.Fatal(err)
	}
	if got := slotOf(t, w, page, "summary"); got != it.Proposed {
		t.Fatalf("after take: %q, want %q", got, it.Proposed)
	}
	for _, o := range openReview(t, v) {
		if o.ID == it.ID {
			t.Fatalf("item %s is still open", it.ID)
		}
	}
	ingestDocs(t, w, readDoc(t, "deploy.md", strings.Replace(deployV1, "production traffic", "real traffic", 1)))
	if got := slotOf(t, w, page, "summary"); !strings.Contains(got, "real traffic") {
		t.Fatalf("after take, a change of the source did not update the slot: %q", got)
	}
	lintClean(t, w)
}

// TestHandEditTakenInSurvivesReingest: the same through an edit of the
// page file taken in with CommitHandEdits (prose wiki commit); a page
// whose every written slot is kept still records the changed source.
func TestHandEditTakenInSurvivesReingest(t *testing.T) {
	v, w := newWiki(t)
	const page = "glossary/canary.html"
	ingestDocs(t, w, readDoc(t, "deploy.md", deployV1))
	file := filepath.Join(v.Root(), "published", "wiki", page)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := wiki.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	edited := string(data)
	for _, s := range p.Slots {
		if s.HTML == "" {
			continue
		}
		edited = strings.Replace(edited, s.HTML, "<p>Our own words on "+s.ID+".</p>", 1)
	}
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := w.CommitHandEdits(context.Background()); err != nil {
		t.Fatal(err)
	}
	d2 := readDoc(t, "deploy.md", strings.Replace(deployV1, "production traffic", "live traffic", 1))
	ingestDocs(t, w, d2)
	_, after, err := w.Read(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Slots {
		if s.HTML == "" {
			continue
		}
		if got, _ := after.Slot(s.ID); got != "<p>Our own words on "+s.ID+".</p>" {
			t.Errorf("slot %s written over: %q", s.ID, got)
		}
	}
	if it := keptItem(t, v, page, "summary"); !strings.Contains(it.Proposed, "live traffic") {
		t.Fatalf("kept-edit item: %+v", it)
	}
	if srcs := after.Meta.Strings("sources"); len(srcs) != 1 || srcs[0] != d2.ID {
		t.Fatalf("sources = %v, want [%s]", srcs, d2.ID)
	}
}

// TestPageWithoutProvenanceIsNotWrittenOver: a page with no record of what
// the pipeline wrote (written before prose kept one) keeps every non-empty
// slot the run would change; slots that already hold what the run writes
// are recorded as the pipeline's, and are updated by later runs.
func TestPageWithoutProvenanceIsNotWrittenOver(t *testing.T) {
	v, w := newWiki(t)
	const page = "glossary/canary.html"
	ingestDocs(t, w, readDoc(t, "deploy.md", deployV1))
	if _, err := w.Update(context.Background(), func(tx *wiki.Tx) error {
		_, err := tx.SetMeta(page, nil, []string{"generated"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	summary, related := slotOf(t, w, page, "summary"), slotOf(t, w, page, "related_notes")
	if summary == "" || related == "" {
		t.Fatalf("summary %q, related_notes %q", summary, related)
	}
	ingestDocs(t, w, readDoc(t, "deploy.md", strings.Replace(deployV1, "production traffic", "live traffic", 1)))
	if got := slotOf(t, w, page, "summary"); got != summary {
		t.Fatalf("a slot of unknown origin was written over: %q", got)
	}
	keptItem(t, v, page, "summary")
	for _, it := range openReview(t, v) {
		if it.Page == page && it.Slot == "related_notes" {
			t.Fatalf("a slot holding what the run writes was queued: %+v", it)
		}
	}
	// related_notes held what the run writes: it is the pipeline's now.
	_, p, err := w.Read(page)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := p.Meta["generated"].(map[string]any)
	if _, ok := rec["related_notes"]; !ok {
		t.Fatalf("generated = %v: related_notes not recorded", p.Meta["generated"])
	}
	if _, ok := rec["summary"]; ok {
		t.Fatalf("generated = %v: the kept summary was recorded as the pipeline's", rec)
	}
}

// scripted is a model that makes one write_slot call, then ends.
type scripted struct{ path, slot, html string }

func (s scripted) Name() string { return "scripted" }

func (s scripted) Call(_ context.Context, req model.Request) (model.Response, error) {
	if len(req.Messages) > 1 {
		return model.Response{Text: "Done.", StopReason: model.StopEnd}, nil
	}
	args, _ := json.Marshal(map[string]string{"path": s.path, "slot": s.slot, "html": s.html})
	return model.Response{ToolCalls: []model.ToolCall{{ID: "c1", Name: "write_slot", Arguments: args}}, StopReason: model.StopToolUse}, nil
}

// TestEnrichKeepsSlotWrittenByHand: enrich does not write over a slot a
// person changed either; it writes a slot it last wrote itself.
func TestEnrichKeepsSlotWrittenByHand(t *testing.T) {
	v, w := newWiki(t)
	const page = "glossary/canary.html"
	ingestDocs(t, w, readDoc(t, "deploy.md", deployV1))
	human := "<p>Watched for ten minutes.</p>"
	writeSlot(t, w, page, "summary", human)
	enrich := func(slot, html string) *ingest.Result {
		t.Helper()
		o := opts(scripted{page, slot, html})
		o.ModelSpec = "scripted"
		res, err := ingest.Enrich(context.Background(), w, ingest.Selection{Pages: []string{page}}, o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	enrich("summary", "<p>A rewritten summary.</p>")
	if got := slotOf(t, w, page, "summary"); got != human {
		t.Fatalf("enrich wrote over the hand-written summary: %q", got)
	}
	if it := keptItem(t, v, page, "summary"); it.Proposed != "<p>A rewritten summary.</p>" {
		t.Fatalf("kept-edit item: %+v", it)
	}
	enrich("body", "<p>A rewritten body.</p>")
	if got := slotOf(t, w, page, "body"); got != "<p>A rewritten body.</p>" {
		t.Fatalf("enrich did not write the body it may write: %q", got)
	}
}

// TestChangedSourceReplacesItsPartOfAMergedPage: when two sources define
// the same term and one changes, its paragraph on the shared page is
// replaced, not added again; the other source's part stays.
func TestChangedSourceReplacesItsPartOfAMergedPage(t *testing.T) {
	_, w := newWiki(t)
	const page = "glossary/canary.html"
	release := "# Release handbook\n\nReleases go out weekly.\n\n## Glossary\n\nCanary: the first hosts that take a new build.\n"
	ingestDocs(t, w, readDoc(t, "deploy.md", deployV1), readDoc(t, "release.md", release))
	body := slotOf(t, w, page, "summary") + slotOf(t, w, page, "body")
	if !strings.Contains(body, "production traffic") || !strings.Contains(body, "the first hosts") {
		t.Fatalf("merged body: %q", body)
	}
	ingestDocs(t, w, readDoc(t, "deploy.md", deployV1), readDoc(t, "release.md", strings.Replace(release, "first hosts", "first servers", 1)))
	body = slotOf(t, w, page, "summary") + slotOf(t, w, page, "body")
	if strings.Count(body, "Release handbook") != 1 || !strings.Contains(body, "the first servers") || strings.Contains(body, "the first hosts") {
		t.Fatalf("the changed source's paragraph was not replaced once:\n%s", body)
	}
	if !strings.Contains(body, "production traffic") {
		t.Fatalf("the other source's part was lost:\n%s", body)
	}
	// The source that wrote the page changes: its own text is updated in
	// place, the other source's paragraph stays, once.
	ingestDocs(t, w, readDoc(t, "deploy.md", strings.Replace(deployV1, "production traffic", "live traffic", 1)), readDoc(t, "release.md", strings.Replace(release, "first hosts", "first servers", 1)))
	body = slotOf(t, w, page, "summary") + slotOf(t, w, page, "body")
	if strings.Contains(body, "production traffic") || strings.Count(body, "live traffic") != 1 || strings.Count(body, "the first servers") != 1 {
		t.Fatalf("after the first source changed:\n%s", body)
	}
	lintClean(t, w)
}

// TestEarlierExcerptsAreEmptied: a source page an earlier engine wrote
// excerpts on (the pipeline's, by its record) loses them when its source
// changes: the page renders the whole source, a quotation above it only
// said it twice.
func TestEarlierExcerptsAreEmptied(t *testing.T) {
	_, w := newWiki(t)
	const page = "notes/deploy.html"
	ingestDocs(t, w, readDoc(t, "deploy.md", deployV1))
	quote := "<blockquote><p>We deploy the service every Tuesday.</p></blockquote>"
	if _, err := w.Update(context.Background(), func(tx *wiki.Tx) error {
		if _, err := tx.WriteSlot(page, "excerpts", quote); err != nil {
			return err
		}
		_, p, err := tx.Read(page)
		if err != nil {
			return err
		}
		gen, _ := p.Meta[wiki.KeyGenerated].(map[string]any)
		gen["excerpts"] = wiki.SlotToken(quote)
		_, err = tx.SetMeta(page, map[string]any{wiki.KeyGenerated: gen}, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ingestDocs(t, w, readDoc(t, "deploy.md", strings.Replace(deployV1, "Tuesday", "Wednesday", 1)))
	if got := slotOf(t, w, page, "excerpts"); got != "" {
		t.Errorf("the earlier excerpts stayed: %q", got)
	}
}
