package ingest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
)

// corpus makes n Markdown notes of about 10 kB over 20 topics.
func corpus(b testing.TB, n int) []*source.Document {
	topics := []string{"billing", "search", "storage", "network", "identity", "payments", "deploys", "alerts", "backups", "caching",
		"queues", "metrics", "logging", "tracing", "schemas", "migrations", "releases", "oncall", "capacity", "security"}
	var docs []*source.Document
	for i := 0; i < n; i++ {
		t := topics[i%len(topics)]
		var sb strings.Builder
		fmt.Fprintf(&sb, "# %s note %d\n\n", t, i)
		for sec := 0; sb.Len() < 10_000; sec++ {
			fmt.Fprintf(&sb, "## %s part %d\n\n", t, sec)
			sb.WriteString(strings.Repeat("The service keeps a record of every request and answers within a budget. ", 12) + "\n\n")
			if sec%2 == 0 {
				sb.WriteString("1. Drain the node.\n2. Restart the node.\n3. Watch the queue.\n\n")
			} else {
				fmt.Fprintf(&sb, "- **%s term %d-%d**: a rule the operators follow when the queue grows.\n\n", t, i, sec)
			}
		}
		d, err := source.Read(fmt.Sprintf("corpus/%s/note-%03d.md", t, i), []byte(sb.String()), "")
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

func BenchmarkIngestOffline(b *testing.B) {
	docs := corpus(b, 50)
	size := 0
	for _, d := range docs {
		size += len(d.Data)
	}
	b.SetBytes(int64(size))
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, w := newWiki(b)
		b.StartTimer()
		if _, err := ingest.Ingest(context.Background(), w, docs, opts(offline.Engine{})); err != nil {
			b.Fatal(err)
		}
	}
}

// longDocument is one HTML manual of about size bytes: chapters of
// sections with paragraphs, a definition list a glossary declares and
// numbered steps under "Steps" headings.
func longDocument(b testing.TB, size int) *source.Document {
	var sb strings.Builder
	sb.WriteString("<html><head><title>Queue manual</title></head><body><h1>Queue manual</h1>\n")
	for ch := 0; sb.Len() < size; ch++ {
		fmt.Fprintf(&sb, "<h2>Chapter %d: queue part %d</h2>\n", ch, ch)
		for sec := 0; sec < 6; sec++ {
			fmt.Fprintf(&sb, "<h3>Section %d.%d</h3>\n<p>%s</p>\n", ch, sec,
				strings.Repeat(fmt.Sprintf("The worker %d drains the queue and answers within a budget. ", sec), 10))
			switch sec {
			case 2:
				fmt.Fprintf(&sb, "<h4>Steps</h4>\n<ol><li>Drain node %d.</li><li>Restart node %d.</li><li>Watch the queue.</li></ol>\n", ch, ch)
			case 4:
				fmt.Fprintf(&sb, "<h4>Glossary</h4>\n<dl><dt>backlog%d</dt><dd>the requests worker %d has not answered yet.</dd></dl>\n", ch, ch)
			}
		}
	}
	sb.WriteString("</body></html>\n")
	d, err := source.Read("manual/queue.html", []byte(sb.String()), "")
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkIngestOfflineLong ingests one long HTML document (split into
// section pages) with the offline engine into a fresh vault.
func BenchmarkIngestOfflineLong(b *testing.B) {
	docs := []*source.Document{longDocument(b, 2<<20)}
	b.SetBytes(int64(len(docs[0].Data)))
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, w := newWiki(b)
		b.StartTimer()
		if _, err := ingest.Ingest(context.Background(), w, docs, opts(offline.Engine{})); err != nil {
			b.Fatal(err)
		}
	}
}
