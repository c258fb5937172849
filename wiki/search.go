package wiki

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"
	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/text/unicode/norm"

	"github.com/prose-store/prose/internal/durable"
)

// The search index is a cache under .prose/search/: a bleve index (BM25
// scoring) of every page's title, tags and slot text, and a state file
// naming the wiki tree it reflects. Every write brings it up to date by
// diffing that tree against the branch, so deleted and moved pages leave
// it; a missing, stale or damaged index is brought up to date, or rebuilt,
// on the next search.
const searchVersion = "wiki-search-v2" // v2: text and queries in NFC

// Hit is one search result.
type Hit struct {
	Path    string   `json:"path"`
	Title   string   `json:"title"`
	Score   float64  `json:"score"`
	Snippet string   `json:"snippet"` // slot text around the hits, each hit in <mark>…</mark>
	Tags    []string `json:"tags"`
}

type searchDoc struct {
	Title string `json:"title"`
	Tags  string `json:"tags"`
	Text  string `json:"text"`
}

func (w *Wiki) searchPaths() (dir, state string) {
	return w.v.StatePath("search", "wiki.bleve"), w.v.StatePath("search", "wiki.state")
}

func searchMapping() mapping.IndexMapping {
	im := bleve.NewIndexMapping()
	im.ScoringModel = bindex.BM25Scoring
	doc := bleve.NewDocumentMapping()
	for _, f := range []string{"title", "tags", "text"} {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = "en"
		fm.Store = true
		fm.IncludeTermVectors = true
		doc.AddFieldMappingsAt(f, fm)
	}
	im.DefaultMapping = doc
	im.DefaultAnalyzer = "en"
	return im
}

// openIndex opens the search index and brings it up to date with the
// committed wiki, rebuilding it when it is missing or damaged.
func (w *Wiki) openIndex(ctx context.Context) (bleve.Index, error) {
	dir, statePath := w.searchPaths()
	_, tree, err := w.v.NodeHead(Node)
	if err != nil {
		return nil, err
	}
	var from plumbing.Hash
	idx, err := bleve.OpenUsing(dir, map[string]any{"bolt_timeout": "10s"})
	if err != nil {
		idx = nil
	} else {
		data, rerr := os.ReadFile(statePath)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if _, cerr := idx.DocCount(); rerr != nil || cerr != nil || len(lines) != 2 || lines[0] != searchVersion {
			idx.Close()
			idx = nil
		} else if h := plumbing.NewHash(lines[1]); lines[1] == plumbing.ZeroHash.String() || (h != plumbing.ZeroHash && w.v.HasObject(h)) {
			from = h
		} else {
			idx.Close()
			idx = nil
		}
	}
	if idx == nil {
		// Missing, damaged, or from another version: start again.
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, err
		}
		if idx, err = bleve.New(dir, searchMapping()); err != nil {
			return nil, fmt.Errorf("create the search index %s: %w", dir, err)
		}
		from = plumbing.ZeroHash
	}
	if from == tree && from != plumbing.ZeroHash {
		return idx, nil
	}
	changes, err := w.v.DiffNodeTrees(from, tree)
	if err != nil {
		idx.Close()
		return nil, err
	}
	b := idx.NewBatch()
	for i, c := range changes {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				idx.Close()
				return nil, err
			}
		}
		if b.Size() >= searchBatch {
			// Bleve analyses a batch whole and builds one segment of it:
			// a large write's pages go in batches, so the memory this
			// takes stays bounded however many pages changed. The state
			// file moves only after the last, so an interrupted update
			// is made again from the same tree.
			if err := idx.Batch(b); err != nil {
				idx.Close()
				return nil, err
			}
			b.Reset()
		}
		if !strings.HasSuffix(c.Path, ".html") {
			continue
		}
		if c.New.IsZero() {
			b.Delete(c.Path)
			continue
		}
		data, err := w.v.Blob(c.New)
		if err != nil {
			idx.Close()
			return nil, err
		}
		p, err := Parse(data)
		if err != nil {
			b.Delete(c.Path)
			continue
		}
		var text strings.Builder
		for _, s := range p.Slots {
			text.WriteString(plainText(s.HTML))
			text.WriteString("\n")
		}
		if err := b.Index(c.Path, searchDoc{Title: norm.NFC.String(p.Meta.Title()), Tags: norm.NFC.String(strings.Join(p.Meta.Tags(), " ")), Text: norm.NFC.String(text.String())}); err != nil {
			idx.Close()
			return nil, err
		}
	}
	if err := idx.Batch(b); err != nil {
		idx.Close()
		return nil, err
	}
	state := searchVersion + "\n" + tree.String() + "\n"
	if err := durable.WriteFile(statePath, []byte(state), 0o644); err != nil {
		idx.Close()
		return nil, err
	}
	return idx, nil
}

// searchBatch is how many pages go into the search index at once.
const searchBatch = 500

// indexChanged brings the search index up to date after a write. The
// write is committed already: a failure here only leaves the cache
// behind, and the next search catches up.
func (w *Wiki) indexChanged(_ []string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if idx, err := w.openIndex(ctx); err == nil {
		idx.Close()
	}
}

// Search returns up to limit pages matching text, best first (BM25 over
// title, tags and slot text; the title counts most).
func (w *Wiki) Search(ctx context.Context, text string, limit int) ([]Hit, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("search needs words to look for")
	}
	if limit <= 0 {
		limit = 10
	}
	idx, err := w.openIndex(ctx)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	fields := []struct {
		name  string
		boost float64
	}{{"title", 3}, {"tags", 2}, {"text", 1}}
	var qs []query.Query
	for _, f := range fields {
		m := bleve.NewMatchQuery(norm.NFC.String(text))
		m.SetField(f.name)
		m.SetBoost(f.boost)
		qs = append(qs, m)
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(qs...), limit, 0, false)
	req.Fields = []string{"title", "tags"}
	req.Highlight = bleve.NewHighlightWithStyle("html")
	req.Highlight.AddField("text")
	res, err := idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	out := []Hit{}
	for _, h := range res.Hits {
		hit := Hit{Path: h.ID, Score: h.Score, Tags: []string{}}
		if t, ok := h.Fields["title"].(string); ok {
			hit.Title = t
		}
		if t, ok := h.Fields["tags"].(string); ok && t != "" {
			hit.Tags = strings.Fields(t)
		}
		if frags := h.Fragments["text"]; len(frags) > 0 {
			hit.Snippet = strings.Join(strings.Fields(frags[0]), " ")
		}
		out = append(out, hit)
	}
	return out, nil
}

// ReindexSearch drops the search index and builds it again.
func (w *Wiki) ReindexSearch(ctx context.Context) error {
	dir, state := w.searchPaths()
	_ = os.Remove(state)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	idx, err := w.openIndex(ctx)
	if err != nil {
		return err
	}
	return idx.Close()
}
