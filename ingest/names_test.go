package ingest_test

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

func readDoc(t testing.TB, name, body string) *source.Document {
	t.Helper()
	d, err := source.Read(name, []byte(body), "")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// pageOf returns the page of template tmpl that records source id.
func pageOf(t *testing.T, w *wiki.Wiki, id, tmpl string) string {
	t.Helper()
	pages, err := w.Pages()
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, pi := range pages {
		_, p, err := w.Read(pi.Path)
		if err != nil {
			t.Fatal(err)
		}
		if p.Meta.Template() == tmpl && slices.Contains(p.Meta.Strings("sources"), id) {
			found = append(found, pi.Path)
		}
	}
	if len(found) != 1 {
		t.Fatalf("source %s has %d %s pages: %v", id, len(found), tmpl, found)
	}
	return found[0]
}

func pageText(t *testing.T, w *wiki.Wiki, rel string) string {
	t.Helper()
	_, data, err := w.ReadFile(rel)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Two different sources with the same title each keep a source page (and
// a note) of their own: the second one's words are on a page, and each
// page records only its source. A forced or changed re-ingest finds the
// same page again.
func TestSameTitleSourcesKeepTheirOwnPages(t *testing.T) {
	_, w := newWiki(t)
	m := offline.Engine{}
	a := readDoc(t, "a/guide.md", "# Setup Guide\n\nInstall the alpha widget first. The alpha widget needs a calibrated flux capacitor.\n")
	b := readDoc(t, "b/guide.md", "# Setup Guide\n\nConfigure the beta gateway with TLS. The beta gateway refuses plain connections.\n")
	if _, err := ingest.Ingest(context.Background(), w, []*source.Document{a}, opts(m)); err != nil {
		t.Fatal(err)
	}
	res, err := ingest.Ingest(context.Background(), w, []*source.Document{b}, opts(m))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range res.Review {
		if it.Kind == "merge" {
			t.Errorf("a source with its own pages asks to review a merge: %+v", it)
		}
	}
	pa, pb := pageOf(t, w, a.ID, "source"), pageOf(t, w, b.ID, "source")
	if pa == pb {
		t.Fatalf("both sources share the source page %s", pa)
	}
	if !slices.Contains(res.Created, pb) || pb != "notes/b/guide.html" {
		t.Errorf("the second source page is %s (created %v), want notes/b/guide.html (its name's path)", pb, res.Created)
	}
	if txt := pageText(t, w, pb); !strings.Contains(txt, "beta gateway") || strings.Contains(txt, "alpha widget") {
		t.Errorf("%s does not say what b/guide.md says:\n%s", pb, txt)
	}
	if txt := pageText(t, w, pa); !strings.Contains(txt, "alpha widget") || strings.Contains(txt, "beta gateway") {
		t.Errorf("%s changed:\n%s", pa, txt)
	}

	// Forced: the same pages, nothing created.
	force := opts(m)
	force.Force = true
	res, err = ingest.Ingest(context.Background(), w, []*source.Document{b}, force)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) != 0 {
		t.Errorf("a forced re-ingest created %v", res.Created)
	}
	// Changed: b's pages change, a's do not, nothing created.
	b2 := readDoc(t, "b/guide.md", "# Setup Guide\n\nConfigure the beta gateway with TLS 1.3 only. The beta gateway refuses plain connections.\n")
	res, err = ingest.Ingest(context.Background(), w, []*source.Document{b2}, opts(m))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) != 0 || !slices.Contains(res.Updated, pb) || slices.Contains(res.Updated, pa) {
		t.Errorf("changed source: created %v updated %v", res.Created, res.Updated)
	}
	if pageOf(t, w, b2.ID, "source") != pb || !strings.Contains(pageText(t, w, pb), "TLS 1.3") {
		t.Errorf("the changed source's page is not %s", pb)
	}
	lintClean(t, w)
}

// Two sources defining one term share its page; the review item says what
// the second source did there: added its definition, or nothing when the
// page already said the same.
func TestMergeReviewSaysWhatHappened(t *testing.T) {
	_, w := newWiki(t)
	m := offline.Engine{}
	one := readDoc(t, "one.md", "# Release Terms\n\n## Glossary\n\n- Canary: a small first deployment that takes real traffic\n")
	two := readDoc(t, "two.md", "# Rollout Handbook\n\n## Glossary\n\n- Canary: an instance that runs the new build before the fleet does\n")
	three := readDoc(t, "three.md", "# Deploy Words\n\n## Glossary\n\n- Canary: an instance that runs the new build before the fleet does\n")
	if _, err := ingest.Ingest(context.Background(), w, []*source.Document{one}, opts(m)); err != nil {
		t.Fatal(err)
	}
	detail := func(doc *source.Document) (string, string) {
		res, err := ingest.Ingest(context.Background(), w, []*source.Document{doc}, opts(m))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Review {
			if it.Kind == "merge" {
				return it.Page, it.Detail
			}
		}
		t.Fatalf("%s: no merge review item in %+v", doc.Name, res.Review)
		return "", ""
	}
	// What the page says: its slots (its shell lists the pages linking to
	// it, which each source's page does).
	slots := func(page string) string {
		_, p, err := w.Read(page)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(p.Slots)
	}
	page, d := detail(two)
	body := pageText(t, w, page)
	if !strings.Contains(d, "was added") || !strings.Contains(d, "Rollout Handbook") || !strings.Contains(body, "runs the new build") {
		t.Errorf("second definition: %q; page:\n%s", d, body)
	}
	said := slots(page)
	_, d = detail(three)
	if !strings.Contains(d, "nothing was added") || slots(page) != said {
		t.Errorf("same definition again: %q", d)
	}
	// The page's own definition, which it shows capitalised.
	four := readDoc(t, "four.md", "# Ship Notes\n\n## Glossary\n\n- Canary: a small first deployment that takes real traffic\n")
	if _, d = detail(four); !strings.Contains(d, "nothing was added") || slots(page) != said {
		t.Errorf("the page's own definition again: %q; page:\n%s", d, pageText(t, w, page))
	}
}

// File names in any script get slugs of their own letters, distinct per
// name (a page's file name comes from its source's path).
func TestNonLatinTitlesGetTheirOwnSlugs(t *testing.T) {
	_, w := newWiki(t)
	docs := []*source.Document{
		readDoc(t, "Οδηγός Εγκατάστασης.md", "# Οδηγός Εγκατάστασης\n\nΤο εργαλείο χρειάζεται ρύθμιση πριν από τη χρήση.\n"),
		readDoc(t, "Руководство Установки.md", "# Руководство Установки\n\nИнструмент требует настройки перед использованием.\n"),
		readDoc(t, "安装指南.md", "# 安装指南\n\n首先安装工具，然后配置它。\n"),
		readDoc(t, "دليل التثبيت.md", "# دليل التثبيت\n\nتحتاج الأداة إلى إعداد قبل الاستخدام.\n"),
		readDoc(t, "★★★.md", "# ★★★\n\nA page whose title has no letters at all.\n"),
		readDoc(t, "→→.md", "# →→\n\nAnother page whose title has no letters.\n"),
	}
	if _, err := ingest.Ingest(context.Background(), w, docs, opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{docs[0].ID: "οδηγός-εγκατάστασης.html", docs[1].ID: "руководство-установки.html", docs[2].ID: "安装指南.html", docs[3].ID: "دليل-التثبيت.html"}
	seen := map[string]bool{}
	for _, d := range docs {
		p := pageOf(t, w, d.ID, "source")
		base := p[strings.LastIndex(p, "/")+1:]
		if wb, ok := want[d.ID]; ok && base != wb {
			t.Errorf("%s: source page %s, want …/%s", d.Name, p, wb)
		}
		if base == "page.html" || seen[base] {
			t.Errorf("%s: source page %s is not a name of its own", d.Name, p)
		}
		seen[base] = true
	}
	lintClean(t, w)
}

// A page stored under a slug of older rules keeps its path: a re-ingest of
// its changed source updates it there and creates no second page.
func TestStoredPagesKeepTheirPaths(t *testing.T) {
	_, w := newWiki(t)
	m := offline.Engine{}
	d := readDoc(t, "ops/søren.md", "# Søren's Runbook\n\nRestart things carefully.\n\n1. Drain the node.\n2. Restart it.\n")
	if _, err := ingest.Ingest(context.Background(), w, []*source.Document{d}, opts(m)); err != nil {
		t.Fatal(err)
	}
	// Where the page would have been under the ASCII-only slug rule.
	old := pageOf(t, w, d.ID, "source")
	legacy := "runbook/s-ren-s-runbook.html"
	if _, err := w.Update(context.Background(), func(tx *wiki.Tx) error {
		_, _, _, err := tx.Move(old, legacy)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	d2 := readDoc(t, "ops/søren.md", "# Søren's Runbook\n\nRestart things carefully, one node at a time.\n\n1. Drain the node.\n2. Restart it.\n")
	res, err := ingest.Ingest(context.Background(), w, []*source.Document{d2}, opts(m))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) != 0 || !slices.Contains(res.Updated, legacy) || pageOf(t, w, d2.ID, "source") != legacy {
		t.Errorf("re-ingest: created %v updated %v", res.Created, res.Updated)
	}
	if !strings.Contains(pageText(t, w, legacy), "one node at a time") {
		t.Errorf("%s was not updated", legacy)
	}
}

// TestASourceLinksItsOwnPageOfASharedTitle: where a source's text names
// the title it shares with another source's page, its pages link to its
// own page of that title, never to the other source's.
func TestASourceLinksItsOwnPageOfASharedTitle(t *testing.T) {
	_, w := newWiki(t)
	m := offline.Engine{}
	a := readDoc(t, "a/guide.md", "# Setup Guide\n\nInstall the alpha widget first. Keep this setup guide at hand.\n")
	b := readDoc(t, "b/guide.md", "# Setup Guide\n\nConfigure the beta gateway with TLS. This setup guide covers the beta gateway; the setup guide ends with a checklist.\n")
	for _, d := range []*source.Document{a, b} {
		if _, err := ingest.Ingest(context.Background(), w, []*source.Document{d}, opts(m)); err != nil {
			t.Fatal(err)
		}
	}
	pa := pageOf(t, w, a.ID, "source")
	pages, err := w.Pages()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, pi := range pages {
		_, p, err := w.Read(pi.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(p.Meta.Strings("sources"), b.ID) {
			continue
		}
		checked++
		if txt := pageText(t, w, pi.Path); strings.Contains(txt, `href="`+path.Base(pa)+`"`) || strings.Contains(txt, `/`+pa+`"`) {
			t.Errorf("%s, written from b/guide.md, links to a/guide.md's %s:\n%s", pi.Path, pa, txt)
		}
	}
	if checked == 0 {
		t.Fatal("no page of b/guide.md found")
	}
}
