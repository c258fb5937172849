package ingest_test

import (
	"context"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/model"
)

// systems records the system text of every call it passes on.
type systems struct {
	model.Model
	mu   sync.Mutex
	seen []string
}

func (s *systems) Call(ctx context.Context, req model.Request) (model.Response, error) {
	s.mu.Lock()
	s.seen = append(s.seen, req.System)
	s.mu.Unlock()
	return s.Model.Call(ctx, req)
}

// TestFixedPartsFollowTheDay: the fixed parts of the prompts are made
// once and kept, but a run whose day changes (a clock read again for
// each call, a day later each time) sends the new day's: "Today is"
// names more than one day across its calls, and every call of a day
// sends that day's text.
func TestFixedPartsFollowTheDay(t *testing.T) {
	_, w := newWiki(t)
	var docs []*source.Document
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		d, err := source.Read("notes/"+name, []byte("# Note "+name+"\n\nA paragraph about queues.\n\n## Steps\n\n1. Drain the node.\n2. Restart it.\n"), "")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	rec := &systems{Model: offline.Engine{}}
	var mu sync.Mutex
	now := day
	o := opts(rec)
	o.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(24 * time.Hour)
		return now
	}
	if _, err := ingest.Ingest(context.Background(), w, docs, o); err != nil {
		t.Fatal(err)
	}
	today := regexp.MustCompile(`Today is (\d{4}-\d{2}-\d{2})`)
	days := map[string]string{} // day → its system text
	for _, s := range rec.seen {
		m := today.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("a call's system text names no day:\n%.300s", s)
		}
		if prev, ok := days[m[1]]; ok && prev != s {
			t.Fatalf("two calls of %s sent different system texts", m[1])
		}
		days[m[1]] = s
	}
	if len(rec.seen) < 2 || len(days) < 2 {
		t.Fatalf("%d calls named %d days: the fixed parts did not follow the clock", len(rec.seen), len(days))
	}
}
