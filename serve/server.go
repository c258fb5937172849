package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/reactor"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
)

// MaxPayload bounds a delivery's body.
const MaxPayload = 16 << 20

// DefaultQueue is how many deliveries may be in flight (accepted, not yet
// recorded) before the server answers 503.
const DefaultQueue = 16

// RetryAfter is the Retry-After a 503 carries, in seconds.
const RetryAfter = 1

// ScheduleFile is the file of a gateway's world-model that records its
// latest schedule fire.
const ScheduleFile = "schedule.json"

// Config configures a Server.
type Config struct {
	Vault *vault.Vault
	Graph *reactor.Graph
	// Ingress is the manifest's gateways: routes and schedules.
	Ingress []forme.Ingress
	// Renderer picks each node's renderer (reactor.Renderers).
	Renderer func(n *reactor.Node) (reactor.Renderer, error)
	// Clock defaults to the wall clock.
	Clock Clock
	// Secret returns a gateway's configured webhook secret, "" for none.
	Secret func(gateway string) string
	// SecretName names where a gateway's secret is configured (an
	// environment variable), for messages.
	SecretName func(gateway string) string
	// Queue bounds the deliveries in flight (default DefaultQueue).
	Queue int
	// Log receives one line per delivery, disposition and event.
	Log io.Writer
	// WorkDir holds the render workspaces; TempDir the render directories.
	WorkDir, TempDir string
	// Who names the server in the vault's lock holder file.
	Who string
}

type route struct {
	method, path, node string
	secret             *Secret
}

type cronEntry struct {
	node, expr string
	sched      cron.Schedule
	loc        *time.Location
	last       time.Time
}

// Server is prose serve: the HTTP ingress, the schedules and one render
// worker over a vault.
type Server struct {
	cfg    Config
	clock  Clock
	r      *reactor.Reconciler
	store  reactor.Store
	routes []route
	crons  []*cronEntry
	cronOf map[string]*cronEntry
	notes  []string

	slots  chan struct{} // the bounded delivery queue
	kick   chan struct{} // wakes the render worker
	replan chan struct{} // wakes the scheduler
	gate   sync.RWMutex  // a render starts only after every accepted delivery was answered
	logMu  sync.Mutex

	workCtx  context.Context
	closing  atomic.Bool
	accepted atomic.Int64
	refused  atomic.Int64
	rejected atomic.Int64
	ticks    atomic.Int64

	recentMu sync.Mutex
	recent   []reactor.Outcome
}

// New checks the configuration: routes (no two gateways on one), secrets
// and schedules. Notes say what is not served (a schedule written in
// prose, with no cron item).
func New(cfg Config) (*Server, error) {
	if cfg.Clock == nil {
		cfg.Clock = WallClock{}
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Who == "" {
		cfg.Who = "prose serve"
	}
	if cfg.Secret == nil {
		cfg.Secret = func(string) string { return "" }
	}
	if cfg.SecretName == nil {
		cfg.SecretName = func(g string) string { return "the secret of " + g }
	}
	s := &Server{cfg: cfg, clock: cfg.Clock, cronOf: map[string]*cronEntry{},
		slots: make(chan struct{}, cfg.Queue), kick: make(chan struct{}, 1), replan: make(chan struct{}, 1), workCtx: context.Background()}
	seen := map[string]string{}
	now := s.clock.Now()
	for _, in := range cfg.Ingress {
		if cfg.Graph.Node(in.Node) == nil {
			continue
		}
		var sec *Secret
		if raw := cfg.Secret(in.Node); raw != "" && len(in.Routes) > 0 {
			p, err := ParseSecret(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", cfg.SecretName(in.Node), err)
			}
			sec = p
		}
		for _, rt := range in.Routes {
			key := rt.Method + " " + rt.Path
			if other, dup := seen[key]; dup {
				return nil, fmt.Errorf("%s and %s both receive %s: give each gateway its own path in ### Receives", other, in.Node, key)
			}
			seen[key] = in.Node
			s.routes = append(s.routes, route{method: rt.Method, path: rt.Path, node: in.Node, secret: sec})
		}
		switch {
		case in.Schedule.Cron != "":
			loc := time.UTC
			if tz := in.Schedule.Timezone; tz != "" {
				l, err := time.LoadLocation(tz)
				if err != nil {
					return nil, fmt.Errorf("%s: ### Schedule timezone %q is not a known time zone (write an IANA name such as Europe/Paris, or UTC)", in.Node, tz)
				}
				loc = l
			}
			sched, err := cron.ParseStandard(in.Schedule.Cron)
			if err != nil {
				return nil, fmt.Errorf("%s: ### Schedule cron %q: %v (write five fields: minute hour day-of-month month day-of-week, such as 0 9 * * 1)", in.Node, in.Schedule.Cron, err)
			}
			e := &cronEntry{node: in.Node, expr: in.Schedule.Cron, sched: sched, loc: loc, last: now}
			s.crons = append(s.crons, e)
			s.cronOf[in.Node] = e
		case len(in.Schedule.Text) > 0:
			s.notes = append(s.notes, fmt.Sprintf("%s: ### Schedule has no cron item, so it is not fired; write `- cron: 0 9 * * 1` (and `- timezone: …`)", in.Node))
		}
	}
	sort.Slice(s.routes, func(i, j int) bool { return s.routes[i].path < s.routes[j].path })
	s.store = newLockedStore(cfg.Vault, cfg.Who, s.clock.Now)
	s.r = reactor.New(reactor.Options{
		Graph:    cfg.Graph,
		Store:    s.store,
		Renderer: s.gated(cfg.Renderer),
		Now:      s.clock.Now,
		WorkDir:  cfg.WorkDir,
		TempDir:  cfg.TempDir,
	})
	return s, nil
}

// Notes are what New found worth saying (schedules not fired).
func (s *Server) Notes() []string { return s.notes }

// Routes lists the served routes: "METHOD /path → gateway (signature)".
func (s *Server) Routes() []string {
	var out []string
	for _, rt := range s.routes {
		check := "no signature check"
		if rt.secret != nil {
			check = "signature: " + rt.secret.Scheme()
		}
		out = append(out, fmt.Sprintf("%s %s → %s (%s)", rt.method, rt.path, rt.node, check))
	}
	for _, e := range s.crons {
		out = append(out, fmt.Sprintf("schedule %q (%s) → %s", e.expr, e.loc, e.node))
	}
	return out
}

// gated wraps each renderer so a render starts only once every delivery
// recorded before it has been answered: the sender hears 202 before
// anything downstream of its payload renders.
func (s *Server) gated(pick func(n *reactor.Node) (reactor.Renderer, error)) func(n *reactor.Node) (reactor.Renderer, error) {
	if pick == nil {
		return nil
	}
	return func(n *reactor.Node) (reactor.Renderer, error) {
		rend, err := pick(n)
		if rend == nil || err != nil {
			return rend, err
		}
		return reactor.RenderFunc(func(ctx context.Context, req *reactor.Request) (reactor.Result, error) {
			s.gate.Lock()
			//lint:ignore SA2001 an empty critical section: wait for the answers in flight
			s.gate.Unlock()
			return rend.Render(ctx, req)
		}), nil
	}
}

func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, "serve: "+format+"\n", args...)
}

func (s *Server) wakeWorker() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Server) wakeScheduler() {
	select {
	case s.replan <- struct{}{}:
	default:
	}
}

// Run serves on ln until ctx ends: it first wakes what is dirty (as prose
// run does), then takes deliveries and fires schedules. When ctx ends it
// stops taking deliveries, lets the ones being recorded finish, abandons
// the render in flight at a safe point (no receipt; the next run renders
// it again) and returns nil.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	s.workCtx = work
	seeds, err := s.r.Dirty()
	if err != nil {
		return err
	}
	for _, sd := range seeds {
		if err := s.r.Wake(sd); err != nil {
			return err
		}
	}
	s.wakeWorker()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.worker(work) }()
	go func() { defer wg.Done(); s.scheduler(work) }()
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		BaseContext: func(net.Listener) context.Context { return work }}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-served:
		stopWork()
		wg.Wait()
		return err
	}
	s.closing.Store(true)
	s.logf("stopping: no new deliveries; finishing the ones being recorded")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_ = hs.Shutdown(sctx)
	cancel()
	inflight := s.r.Rendering()
	stopWork()
	wg.Wait()
	s.logOutcomes(s.r.Settle())
	if len(inflight) > 0 {
		s.logf("stopped: the render of %s was abandoned at a safe point (no receipt, nothing published; the next prose run or serve renders it again)", strings.Join(inflight, ", "))
	} else {
		s.logf("stopped: no render was in flight")
	}
	s.logf("%s accepted, %d refused (503), %d rejected (400/401/413/415), %s", count(s.accepted.Load(), "delivery", "deliveries"),
		s.refused.Load(), s.rejected.Load(), count(s.ticks.Load(), "schedule fire", "schedule fires"))
	return nil
}

// worker drains the reconciler, one render at a time.
func (s *Server) worker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		}
		for {
			_, err := s.r.Drain(ctx)
			s.logOutcomes(s.r.Settle())
			s.wakeScheduler()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				s.logf("drain stopped: %v", err)
				break
			}
			if len(s.r.Queued()) == 0 {
				break
			}
		}
	}
}

func (s *Server) logOutcomes(outs []reactor.Outcome) {
	if len(outs) == 0 {
		return
	}
	for _, o := range outs {
		s.logf("%s %s: %s", o.Node, o.Disposition, o.Why)
	}
	s.recentMu.Lock()
	s.recent = append(s.recent, outs...)
	if n := len(s.recent); n > 100 {
		s.recent = append([]reactor.Outcome(nil), s.recent[n-100:]...)
	}
	s.recentMu.Unlock()
}

// scheduler fires cron entries and self-driven cadences at their times:
// it sleeps until the earliest next event, re-planning whenever a drain
// ends (receipts moved the cadences).
func (s *Server) scheduler(ctx context.Context) {
	fired := map[string]time.Time{} // self-driven node → its last receipt time when last woken
	for {
		now := s.clock.Now()
		next, err := s.plan(now, fired)
		if err != nil {
			s.logf("schedule: %v", err)
		}
		var due <-chan time.Time
		if !next.IsZero() {
			due = s.clock.After(next.Sub(now))
		}
		select {
		case <-ctx.Done():
			return
		case <-s.replan:
		case <-due:
			s.fire(ctx, fired)
		}
	}
}

// plan returns the time of the next event: a cron entry's next minute, a
// self-driven node's cadence after its last receipt, or a valid_until
// lapsing in a self-driven node's world-model.
func (s *Server) plan(now time.Time, fired map[string]time.Time) (time.Time, error) {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, e := range s.crons {
		consider(e.sched.Next(e.last.In(e.loc)))
	}
	g := s.cfg.Graph
	for _, id := range g.IDs() {
		n := g.Node(id)
		if n.Cadence <= 0 && n.Wake != receipt.WakeSelf {
			continue
		}
		if n.Cadence > 0 {
			when, err := s.store.When(id)
			if err != nil {
				return next, err
			}
			if !when.IsZero() && fired[id] != when {
				consider(when.Add(n.Cadence))
			}
		}
		files, err := s.store.Files(id)
		if err != nil {
			return next, err
		}
		if vu := reactor.NextValidUntil(files, now); !vu.IsZero() {
			consider(vu.Add(time.Second))
		}
	}
	return next, nil
}

// fire runs what is due: each cron entry whose next minute has come
// publishes a tick into its gateway (which wakes the subscribers of what
// it moved), then every self-driven node whose cadence passed or whose
// valid_until lapsed is woken.
func (s *Server) fire(ctx context.Context, fired map[string]time.Time) {
	now := s.clock.Now()
	for _, e := range s.crons {
		if at := e.sched.Next(e.last.In(e.loc)); !at.After(now) {
			e.last = now
			if err := s.tick(ctx, e, at); err != nil {
				s.logf("schedule %s (%s): %v", e.node, e.expr, err)
			}
		}
	}
	// A cadence that came due is planned again only after the node's next
	// receipt, whatever wakes it (else a due cadence of a node dirty for
	// another reason would be planned in the past, again and again).
	for _, id := range s.cfg.Graph.IDs() {
		if n := s.cfg.Graph.Node(id); n.Cadence > 0 {
			if when, err := s.store.When(id); err == nil && !when.IsZero() && !now.Before(when.Add(n.Cadence)) {
				fired[id] = when
			}
		}
	}
	seeds, err := s.r.Dirty()
	if err != nil {
		s.logf("schedule: %v", err)
		return
	}
	for _, sd := range seeds {
		if sd.Source != receipt.WakeSelf {
			continue // moved inputs wake their node by propagation
		}
		_ = s.r.Wake(sd)
	}
	s.wakeWorker()
}

// tick publishes a schedule fire into a gateway: its world-model as it is,
// with schedule.json holding the expression and the minute fired.
func (s *Server) tick(ctx context.Context, e *cronEntry, at time.Time) error {
	files, err := s.store.Files(e.node)
	if err != nil {
		return err
	}
	doc, _ := json.Marshal(map[string]string{"cron": e.expr, "fired_at": at.UTC().Format(time.RFC3339)})
	files[ScheduleFile] = append(doc, '\n')
	out, err := s.ingest(ctx, e.node, files)
	if err != nil {
		return err
	}
	s.ticks.Add(1)
	s.logf("schedule %s (%s) fired for %s: %s", e.node, e.expr, at.UTC().Format(time.RFC3339), out.Disposition)
	return nil
}

func (s *Server) ingest(ctx context.Context, node string, files map[string][]byte) (reactor.Outcome, error) {
	tmp, err := os.MkdirTemp(s.cfg.TempDir, "prose-delivery-")
	if err != nil {
		return reactor.Outcome{}, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "payload")
	if err := reactor.WriteWorldModel(dir, files); err != nil {
		return reactor.Outcome{}, err
	}
	out, err := s.r.Ingest(ctx, node, dir, nil)
	if err == nil {
		s.wakeWorker()
	}
	return out, err
}

// Handler is the server's HTTP surface: the gateways' routes, /health,
// /status, /receipts and the wiki under /wiki/.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := req.URL.Path
		var allowed []string
		for _, rt := range s.routes {
			if rt.path != p {
				continue
			}
			if rt.method == req.Method {
				s.deliver(w, req, rt)
				return
			}
			allowed = append(allowed, rt.method)
		}
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: this route takes %s", req.Method, p, strings.Join(allowed, ", ")))
			return
		}
		switch {
		case p == "/health":
			s.readOnly(w, req, s.health)
		case p == "/status":
			s.readOnly(w, req, s.status)
		case p == "/receipts":
			s.readOnly(w, req, s.receipts)
		case p == "/wiki" || strings.HasPrefix(p, "/wiki/"):
			s.readOnly(w, req, s.wiki)
		default:
			writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s: the gateways receive %s; see /status", p, s.routeList()))
		}
	})
}

func (s *Server) routeList() string {
	if len(s.routes) == 0 {
		return "nothing (no gateway has a ### Receives route)"
	}
	var out []string
	for _, rt := range s.routes {
		out = append(out, rt.method+" "+rt.path)
	}
	return strings.Join(out, ", ")
}

func (s *Server) readOnly(w http.ResponseWriter, req *http.Request, h http.HandlerFunc) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, req.URL.Path+" is read-only: GET or HEAD")
		return
	}
	h(w, req)
}

// deliveryDoc answers an accepted delivery.
type deliveryDoc struct {
	Delivery string   `json:"delivery"` // the gateway receipt's content hash
	Node     string   `json:"node"`
	Status   string   `json:"status"` // rendered, or skipped when the payload moved nothing
	Moved    []string `json:"moved"`
}

func (s *Server) deliver(w http.ResponseWriter, req *http.Request, rt route) {
	reject := func(code int, msg string) {
		s.rejected.Add(1)
		s.logf("%s %s → %s: %d %s", req.Method, rt.path, rt.node, code, msg)
		writeError(w, code, msg)
	}
	if s.closing.Load() {
		s.refused.Add(1)
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
		writeError(w, http.StatusServiceUnavailable, "the server is shutting down: retry later")
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			reject(http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: a delivery is JSON (application/json)", ct))
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, MaxPayload))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			reject(http.StatusRequestEntityTooLarge, fmt.Sprintf("the payload is larger than %d bytes", MaxPayload))
			return
		}
		reject(http.StatusBadRequest, "the body could not be read: "+err.Error())
		return
	}
	if rt.secret != nil {
		if err := rt.secret.Verify(req.Header, body, s.clock.Now()); err != nil {
			reject(http.StatusUnauthorized, "signature refused: "+err.Error())
			return
		}
	}
	files, err := reactor.PayloadFiles(body)
	if err != nil {
		reject(http.StatusBadRequest, err.Error())
		return
	}
	e := s.cronOf[rt.node]
	if e != nil {
		if _, clash := files[ScheduleFile]; clash {
			reject(http.StatusBadRequest, fmt.Sprintf("the top-level key %q is where %s records its schedule fires: nest it under another key", strings.TrimSuffix(ScheduleFile, ".json"), rt.node))
			return
		}
	}
	select {
	case s.slots <- struct{}{}:
	default:
		s.refused.Add(1)
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("the delivery queue is full (%d in flight): nothing was recorded; retry after %d s", cap(s.slots), RetryAfter))
		return
	}
	defer func() { <-s.slots }()
	// Hold the gate until the answer is written: no render starts between
	// the record and the 202.
	s.gate.RLock()
	defer s.gate.RUnlock()
	if e != nil {
		cur, err := s.store.Files(rt.node)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "read the gateway's world-model: "+err.Error())
			return
		}
		if sch, ok := cur[ScheduleFile]; ok {
			files[ScheduleFile] = sch
		}
	}
	out, err := s.ingest(s.workCtx, rt.node, files)
	if err != nil {
		s.logf("%s %s → %s: not recorded: %v", req.Method, rt.path, rt.node, err)
		if s.workCtx.Err() != nil {
			w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
			writeError(w, http.StatusServiceUnavailable, "the server is shutting down: nothing was recorded; retry later")
			return
		}
		writeError(w, http.StatusInternalServerError, "the delivery was not recorded: "+err.Error())
		return
	}
	s.accepted.Add(1)
	status := string(receipt.Rendered)
	if out.Disposition != reactor.Rendered {
		status = string(receipt.Skipped)
	}
	moved := out.Moved
	if moved == nil {
		moved = []string{}
	}
	writeJSON(w, http.StatusAccepted, deliveryDoc{Delivery: out.Receipt, Node: rt.node, Status: status, Moved: moved})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
