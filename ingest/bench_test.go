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
