package plan_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/published"
)

func TestSlugKeepsEveryScript(t *testing.T) {
	for in, want := range map[string]string{
		"Deploy steps":              "deploy-steps",
		"Café Ünits!":               "cafe-units", // the slug such titles always had
		"Οδηγός Εγκατάστασης":       "οδηγός-εγκατάστασης",
		"Руководство по установке":  "руководство-по-установке",
		"安装指南":                      "安装指南",
		"دليل التثبيت":              "دليل-التثبيت",
		"हिन्दी शब्द":               "हिन्दी-शब्द", // vowel signs are marks, kept with their letters
		"Søren's Notes":             "søren-s-notes",
		"Con":                       "con-page", // a Windows device name
		"Ο\u0301δηγός (decomposed)": "όδηγός-decomposed",
	} {
		if got := plan.Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSlugFallbackIsDistinctPerTitle(t *testing.T) {
	seen := map[string]string{}
	for _, in := range []string{"", "???", "🚀🚀", "→ ←", "★"} {
		got := plan.Slug(in)
		if !strings.HasPrefix(got, "page-") || len(got) != len("page-")+8 {
			t.Errorf("Slug(%q) = %q, want page- and a short hash", in, got)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("Slug(%q) = Slug(%q) = %q", in, other, got)
		}
		seen[got] = in
		if plan.Slug(in) != got {
			t.Errorf("Slug(%q) is not stable", in)
		}
	}
}

func TestSlugIsAlwaysAPagePath(t *testing.T) {
	long := strings.Repeat("长", 200)
	for _, in := range []string{long, strings.Repeat("word ", 40), ".git", "a/../b", "x\x00y", "C:\\Windows", "nul.txt", "git~1", "\u200c.git\u200d"} {
		s := plan.Slug(in)
		if utf8.RuneCountInString(s) > plan.MaxSlug || len(s) > 200 || strings.HasSuffix(s, "-") || strings.HasPrefix(s, "-") {
			t.Errorf("Slug(%q) = %q: too long or dangling '-'", in, s)
		}
		if _, err := published.NormalizePath(s + ".html"); err != nil {
			t.Errorf("Slug(%q) = %q breaks a path rule: %v", in, s, err)
		}
		if strings.ContainsAny(s, "/\\.:~ ") || published.IsDeviceName(s) {
			t.Errorf("Slug(%q) = %q is not a safe file name", in, s)
		}
	}
}

func TestWords(t *testing.T) {
	got := strings.Join(plan.Words("The Setup Guide for Деплой and the API Gateway, again"), ",")
	if got != "setup,деплой,gateway" {
		t.Errorf("Words = %s", got)
	}
}

// FuzzSlug: whatever the title, its slug is a name of its own that every
// path rule accepts.
func FuzzSlug(f *testing.F) {
	for _, s := range []string{"Deploy steps", "Οδηγός", "安装指南", "", "★", ".git", "con", "a/b\\c:d", "\u200c.git", strings.Repeat("é", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, title string) {
		s := plan.Slug(title)
		if s == "" || utf8.RuneCountInString(s) > plan.MaxSlug || len(s) > 200 || !utf8.ValidString(s) {
			t.Fatalf("Slug(%q) = %q", title, s)
		}
		if strings.ContainsAny(s, "/\\.:~ ") || strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") || published.IsDeviceName(s) {
			t.Fatalf("Slug(%q) = %q is not a safe file name", title, s)
		}
		if _, err := published.NormalizePath(s + ".html"); err != nil {
			t.Fatalf("Slug(%q) = %q: %v", title, s, err)
		}
		if plan.Slug(title) != s {
			t.Fatalf("Slug(%q) is not stable", title)
		}
	})
}
