package serve

import (
	"errors"
	"fmt"
	"html"
	"mime"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/reactor"
	"github.com/prose-store/prose/vault"
)

// CSP is the Content-Security-Policy the wiki's pages carry in their
// <meta> (docs/wiki-format.md); the server sends it as a header on every
// wiki response, so no page can run a script or reach the network.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'"

// WikiNode is the node whose published files /wiki/ serves.
const WikiNode = "wiki"

func (s *Server) health(w http.ResponseWriter, req *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": !s.closing.Load(), "closing": s.closing.Load()})
}

type statusNode struct {
	Node        string `json:"node"`
	Wake        string `json:"wake"`
	Render      string `json:"render"`
	LastStatus  string `json:"last_status,omitempty"`
	LastReceipt string `json:"last_receipt,omitempty"`
	Dirty       bool   `json:"dirty"`
	Why         string `json:"why,omitempty"`
}

type statusDoc struct {
	Nodes     []statusNode      `json:"nodes"`
	Queue     queueDoc          `json:"queue"`
	Rendering []string          `json:"rendering"`
	Queued    []string          `json:"queued"`
	Recent    []reactor.Outcome `json:"recent"`
	Routes    []string          `json:"routes"`
	Notes     []string          `json:"notes"`
}

type queueDoc struct {
	Capacity int   `json:"capacity"`
	InFlight int   `json:"in_flight"`
	Accepted int64 `json:"accepted"`
	Refused  int64 `json:"refused"`
	Rejected int64 `json:"rejected"`
	Ticks    int64 `json:"schedule_fires"`
}

func (s *Server) status(w http.ResponseWriter, req *http.Request) {
	seeds, err := s.r.Dirty()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	why := map[string]string{}
	for _, sd := range seeds {
		why[sd.Node] = sd.Why
	}
	doc := statusDoc{Nodes: []statusNode{}, Rendering: nonNil(s.r.Rendering()), Queued: nonNil(s.r.Queued()),
		Routes: nonNil(s.Routes()), Notes: nonNil(s.notes)}
	g := s.cfg.Graph
	for _, id := range g.IDs() {
		n := g.Node(id)
		sn := statusNode{Node: id, Wake: string(n.Wake), Render: n.Runtime.Render}
		last, err := s.store.Last(id)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if last != nil {
			sn.LastStatus, sn.LastReceipt = string(last.Status), last.ContentHash
		}
		if y, ok := why[id]; ok {
			sn.Dirty, sn.Why = true, y
		}
		doc.Nodes = append(doc.Nodes, sn)
	}
	doc.Queue = queueDoc{Capacity: cap(s.slots), InFlight: len(s.slots), Accepted: s.accepted.Load(), Refused: s.refused.Load(),
		Rejected: s.rejected.Load(), Ticks: s.ticks.Load()}
	s.recentMu.Lock()
	doc.Recent = append([]reactor.Outcome{}, s.recent...)
	s.recentMu.Unlock()
	writeJSON(w, http.StatusOK, doc)
}

type receiptDoc struct {
	Receipt string    `json:"receipt"`
	Node    string    `json:"node"`
	Status  string    `json:"status"`
	Wake    string    `json:"wake"`
	When    time.Time `json:"when"`
	Reason  string    `json:"failure_reason,omitempty"`
}

var errEnough = errors.New("enough")

// receipts lists the ledger newest first: ?node=NODE, ?limit=N (default
// 50, at most 1000).
func (s *Server) receipts(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	limit := 50
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "limit must be a whole number from 1 to 1000")
			return
		}
		limit = n
	}
	node := q.Get("node")
	out := []receiptDoc{}
	err := s.cfg.Vault.Receipts(func(rec vault.Record) error {
		if node != "" && rec.Receipt.Node != node {
			return nil
		}
		if len(out) >= limit {
			return errEnough
		}
		reason, _ := rec.Receipt.SemanticDiff["failure_reason"].(string)
		out = append(out, receiptDoc{Receipt: rec.Receipt.ContentHash, Node: rec.Receipt.Node, Status: string(rec.Receipt.Status),
			Wake: string(rec.Receipt.Wake.Source), When: rec.When.UTC(), Reason: reason})
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"receipts": out})
}

// wiki serves the wiki's published files read-only, from the branch (not
// the working tree), with the pages' CSP as a header. A folder lists its
// entries.
func (s *Server) wiki(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	rel := strings.TrimPrefix(strings.TrimPrefix(req.URL.Path, "/wiki"), "/")
	if rel != "" {
		n, err := published.NormalizePath(rel)
		if err != nil || n != strings.TrimSuffix(rel, "/") {
			writeError(w, http.StatusBadRequest, "not a wiki path: "+req.URL.Path)
			return
		}
		rel = n
	}
	_, tree, err := s.cfg.Vault.NodeHead(WikiNode)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if rel != "" {
		data, ok, err := s.cfg.Vault.NodeFile(tree, rel)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if ok {
			ct := mime.TypeByExtension(path.Ext(rel))
			if ct == "" {
				ct = "application/octet-stream"
			}
			h.Set("Content-Type", ct)
			w.WriteHeader(http.StatusOK)
			if req.Method != http.MethodHead {
				w.Write(data)
			}
			return
		}
	}
	ids, err := s.cfg.Vault.NodeFiles(tree)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	prefix := rel
	if prefix != "" {
		prefix += "/"
	}
	entries := map[string]bool{}
	for p := range ids {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			name, _, sub := strings.Cut(rest, "/")
			if sub {
				name += "/"
			}
			entries[name] = true
		}
	}
	if len(entries) == 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no wiki page %s (the wiki is published/%s/ on the branch)", rel, WikiNode))
		return
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	title := "wiki/" + rel
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n<title>%s</title>\n</head>\n<body>\n<h1>%s</h1>\n<ul>\n",
		html.EscapeString(CSP), html.EscapeString(title), html.EscapeString(title))
	for _, n := range names {
		fmt.Fprintf(&b, "<li><a href=\"/wiki/%s\">%s</a></li>\n", html.EscapeString(prefix+n), html.EscapeString(n))
	}
	b.WriteString("</ul>\n</body>\n</html>\n")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		w.Write([]byte(b.String()))
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
