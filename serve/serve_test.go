package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/internal/lock"
	"github.com/prose-store/prose/internal/refdata"
	"github.com/prose-store/prose/reactor"
	"github.com/prose-store/prose/serve"
	"github.com/prose-store/prose/vault"
)

const ghSecret = "it-is-a-secret-7f3a"

// hooks is the fixture fixtures/runtime/hooks served on loopback.
type hooks struct {
	t       *testing.T
	v       *vault.Vault
	url     string
	holdDir string // HOOKS_HOLD
	clock   serve.Clock
	log     *syncBuffer
	stop    func()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type hooksOpt struct {
	fixture string // under fixtures/runtime (default hooks)
	secret  string
	queue   int
	clock   serve.Clock
}

func newHooks(t *testing.T, o hooksOpt) *hooks {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	root := refdata.RepoRoot(t)
	if o.fixture == "" {
		o.fixture = "hooks"
	}
	fx := filepath.Join(root, "fixtures/runtime", o.fixture)
	dir := t.TempDir()
	vdir := filepath.Join(dir, "v")
	v, err := vault.Init(vdir, vault.InitOptions{Options: vault.Options{NoFsync: true}})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", filepath.Join(fx, "src"), filepath.Join(fx, "render.sh"), vdir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	p, err := forme.LoadProject([]string{filepath.Join(vdir, "src")}, forme.Options{Root: vdir, Hash: v.Algorithm()})
	if err != nil {
		t.Fatal(err)
	}
	m, diags := forme.Compile(p)
	if forme.HasErrors(diags) {
		t.Fatalf("the fixture does not compile: %v", diags)
	}
	// Activate it, as prose compile --activate does: the gateway's facets
	// come from its committed canonicalizer.
	files, err := m.Artifacts()
	if err != nil {
		t.Fatal(err)
	}
	data, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	files[vault.ManifestPath] = data
	if _, err := v.CommitFiles(context.Background(), "test", "Activate manifest\n", files); err != nil {
		t.Fatal(err)
	}
	g, _, err := reactor.FromManifest(m, p.Contracts())
	if err != nil {
		t.Fatal(err)
	}
	hold := filepath.Join(dir, "hold")
	os.MkdirAll(hold, 0o755)
	t.Setenv("HOOKS_HOLD", hold)
	h := &hooks{t: t, v: v, holdDir: hold, log: &syncBuffer{}, clock: o.clock}
	srv, err := serve.New(serve.Config{
		Vault:    v,
		Graph:    g,
		Ingress:  m.Ingress,
		Renderer: reactor.Renderers(&reactor.CommandRenderer{Dir: vdir}),
		Clock:    o.clock,
		Secret:   func(string) string { return o.secret },
		Queue:    o.queue,
		Log:      h.log,
		WorkDir:  v.StatePath("run"),
		TempDir:  dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.url = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln) }()
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			for _, f := range []string{"tally", "digest", "report", "sweep"} {
				os.Remove(filepath.Join(hold, "hold-"+f))
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(h.stop)
	h.idle()
	return h
}

var client = &http.Client{Timeout: 60 * time.Second}

// post sends a delivery; sign adds headers.
func (h *hooks) post(body string, sign func(http.Header, []byte)) (int, http.Header, map[string]any) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.url+"/hooks/events", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if sign != nil {
		sign(req.Header, []byte(body))
	}
	resp, err := client.Do(req)
	if err != nil {
		h.t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &doc); err != nil {
		h.t.Fatalf("POST answered %d with no JSON: %q", resp.StatusCode, b)
	}
	return resp.StatusCode, resp.Header, doc
}

func github(secret string) func(http.Header, []byte) {
	return func(h http.Header, body []byte) { h.Set("X-Hub-Signature-256", serve.SignGitHub(secret, body)) }
}

func (h *hooks) get(path string, into any) *http.Response {
	h.t.Helper()
	resp, err := client.Get(h.url + path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			h.t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	return resp
}

type status struct {
	Nodes []struct {
		Node        string `json:"node"`
		LastStatus  string `json:"last_status"`
		LastReceipt string `json:"last_receipt"`
	} `json:"nodes"`
	Rendering []string `json:"rendering"`
	Queued    []string `json:"queued"`
	Queue     struct {
		Capacity int   `json:"capacity"`
		InFlight int   `json:"in_flight"`
		Accepted int64 `json:"accepted"`
		Refused  int64 `json:"refused"`
	} `json:"queue"`
}

// idle waits until nothing renders or is queued (a wait, not a timing).
func (h *hooks) idle() {
	h.t.Helper()
	h.waitFor("the server to be idle", func() bool {
		var st status
		h.get("/status", &st)
		return len(st.Rendering) == 0 && len(st.Queued) == 0
	})
}

func (h *hooks) waitFor(what string, ok func() bool) {
	h.t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	h.t.Fatalf("gave up waiting for %s; log:\n%s", what, h.log.String())
}

type rec struct {
	Receipt, Node, Status, Wake string
}

// receipts returns the ledger, oldest first.
func (h *hooks) receipts() []rec {
	var out []rec
	err := h.v.Receipts(func(r vault.Record) error {
		out = append(out, rec{r.Receipt.ContentHash, r.Receipt.Node, string(r.Receipt.Status), string(r.Receipt.Wake.Source)})
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func (h *hooks) file(node, p string) string {
	h.t.Helper()
	_, tree, err := h.v.NodeHead(node)
	if err != nil {
		h.t.Fatal(err)
	}
	b, _, err := h.v.NodeFile(tree, p)
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *hooks) consistent() {
	h.t.Helper()
	rep, err := h.v.Fsck(context.Background())
	if err != nil || !rep.OK() {
		h.t.Fatalf("fsck: %v %+v", err, rep)
	}
	vr, err := h.v.VerifyReceipts()
	if err != nil || len(vr.Problems) > 0 {
		h.t.Fatalf("receipts verify: %v %+v", err, vr)
	}
}

func (h *hooks) hold(node string) {
	os.WriteFile(filepath.Join(h.holdDir, "hold-"+node), nil, 0o644)
}

func (h *hooks) release(node string) { os.Remove(filepath.Join(h.holdDir, "hold-"+node)) }

func (h *hooks) started(node string) bool {
	_, err := os.Stat(filepath.Join(h.holdDir, "started-"+node))
	return err == nil
}

// TestWebhookWakesGatewayAndDownstream: a signed delivery is recorded as
// the gateway's world-model and answered 202 with its receipt while the
// downstream render it wakes is still held; released, the downstream
// renders against it.
func TestWebhookWakesGatewayAndDownstream(t *testing.T) {
	h := newHooks(t, hooksOpt{secret: ghSecret})
	before := len(h.receipts())
	h.hold("tally")
	code, _, doc := h.post(`{"orders":[{"id":"a"},{"id":"b"}],"notes":[{"text":"hi"}]}`, github(ghSecret))
	if code != http.StatusAccepted {
		t.Fatalf("POST: %d %v", code, doc)
	}
	// Answered while tally's render is held: the answer did not wait.
	if h.started("tally") && h.file("tally", "count.json") == `{"count":2}`+"\n" {
		t.Fatal("tally rendered before the 202")
	}
	recs := h.receipts()
	gw := recs[before]
	if gw.Node != "events" || gw.Status != "rendered" || gw.Wake != "external" || doc["delivery"] != gw.Receipt {
		t.Fatalf("the 202's delivery %v is not the gateway's receipt %+v", doc["delivery"], gw)
	}
	if got := h.file("events", "orders.json"); got != `[{"id":"a"},{"id":"b"}]` {
		t.Fatalf("events/orders.json = %q", got)
	}
	h.waitFor("tally's render to start", func() bool { return h.started("tally") })
	h.release("tally")
	h.idle()
	if got := h.file("report", "summary.json"); got != `{"orders":2,"notes":1}`+"\n" {
		t.Fatalf("report holds %q\nlog:\n%s", got, h.log.String())
	}
	woken := map[string]string{}
	for _, r := range h.receipts()[before+1:] {
		woken[r.Node] = r.Status + "/" + r.Wake
	}
	for _, n := range []string{"tally", "digest", "report"} {
		if woken[n] != "rendered/input" {
			t.Errorf("%s after the delivery: %q, want rendered/input (all: %v)", n, woken[n], woken)
		}
	}
	h.consistent()
}

// TestRefusedDeliveriesPublishNothing: a bad or missing signature is 401,
// a malformed payload 400, another content type 415; none records a
// receipt, and no answer or log line holds the secret.
func TestRefusedDeliveriesPublishNothing(t *testing.T) {
	h := newHooks(t, hooksOpt{secret: ghSecret})
	before := h.receipts()
	good := `{"orders":[{"id":"a"}]}`
	cases := []struct {
		name string
		body string
		sign func(http.Header, []byte)
		code int
	}{
		{"no signature", good, nil, 401},
		{"wrong secret", good, github("not-the-secret"), 401},
		{"signature of another body", good, func(hd http.Header, _ []byte) {
			hd.Set("X-Hub-Signature-256", serve.SignGitHub(ghSecret, []byte(`{}`)))
		}, 401},
		{"not hex", good, func(hd http.Header, _ []byte) { hd.Set("X-Hub-Signature-256", "sha256=zz") }, 401},
		{"malformed JSON, signed", `{"orders":[`, github(ghSecret), 400},
		{"empty object, signed", `{}`, github(ghSecret), 400},
		{"a key that is no file name, signed", `{"../x":1}`, github(ghSecret), 400},
		{"the schedule's key, signed", `{"schedule":1}`, github(ghSecret), 400},
	}
	for _, c := range cases {
		code, _, doc := h.post(c.body, c.sign)
		if code != c.code {
			t.Errorf("%s: %d %v, want %d", c.name, code, doc, c.code)
		}
		if msg, _ := doc["error"].(string); msg == "" || strings.Contains(msg, ghSecret) {
			t.Errorf("%s: error %q (empty, or it quotes the secret)", c.name, msg)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, h.url+"/hooks/events", strings.NewReader("orders=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 415 {
		t.Errorf("form body: %v %v, want 415", resp, err)
	}
	h.idle()
	if after := h.receipts(); len(after) != len(before) {
		t.Fatalf("refused deliveries recorded %d receipts: %v", len(after)-len(before), after[len(before):])
	}
	if strings.Contains(h.log.String(), ghSecret) {
		t.Fatal("the log holds the secret")
	}
	h.v.Receipts(func(r vault.Record) error {
		if b, _ := json.Marshal(r.Receipt); bytes.Contains(b, []byte(ghSecret)) {
			t.Errorf("receipt %s holds the secret", r.Receipt.ContentHash)
		}
		return nil
	})
	// Nor does any plain file of the vault (world-models, state; git's
	// objects are compressed, the receipts above are their content).
	filepath.WalkDir(h.v.Root(), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(ghSecret)) {
				t.Errorf("%s holds the secret", p)
			}
		}
		return nil
	})
	if code, _, doc := h.post(good, github(ghSecret)); code != 202 {
		t.Fatalf("the good delivery: %d %v", code, doc)
	}
	h.consistent()
}

// TestStandardWebhooks: a whsec_ secret checks webhook-id,
// webhook-timestamp and webhook-signature, within the tolerance of the
// server's clock.
func TestStandardWebhooks(t *testing.T) {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	clock := serve.NewManualClock(time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC))
	h := newHooks(t, hooksOpt{secret: secret, clock: clock})
	sign := func(id string, at time.Time, sigOf []byte) func(http.Header, []byte) {
		return func(hd http.Header, body []byte) {
			if sigOf == nil {
				sigOf = body
			}
			sig, err := serve.SignStandard(secret, id, at, sigOf)
			if err != nil {
				t.Fatal(err)
			}
			hd.Set("webhook-id", id)
			hd.Set("webhook-timestamp", fmt.Sprint(at.Unix()))
			hd.Set("webhook-signature", "v1,AAAA "+sig)
		}
	}
	now := clock.Now()
	before := len(h.receipts())
	body := `{"notes":[{"text":"standard"}]}`
	for _, c := range []struct {
		name string
		sign func(http.Header, []byte)
		code int
	}{
		{"stale timestamp", sign("msg_1", now.Add(-serve.Tolerance-time.Second), nil), 401},
		{"future timestamp", sign("msg_1", now.Add(serve.Tolerance+time.Second), nil), 401},
		{"another body", sign("msg_1", now, []byte(`{}`)), 401},
		{"no headers", nil, 401},
	} {
		if code, _, doc := h.post(body, c.sign); code != c.code {
			t.Errorf("%s: %d %v, want %d", c.name, code, doc, c.code)
		}
	}
	if n := len(h.receipts()); n != before {
		t.Fatalf("refused deliveries recorded %d receipts", n-before)
	}
	if code, _, doc := h.post(body, sign("msg_2", now.Add(-time.Minute), nil)); code != 202 {
		t.Fatalf("a good delivery: %d %v", code, doc)
	}
	h.idle()
	if got := h.file("digest", "notes.json"); got != `{"notes":1}`+"\n" {
		t.Fatalf("digest holds %q", got)
	}
}

// TestConcurrentDeliveriesLoseNone: 50 POSTs at once. With the vault's
// writer lock held elsewhere, exactly Queue of them wait and the rest are
// refused with 503 and Retry-After; once it is free, each waiting one is
// answered 202 with its own gateway receipt. Then 50 at once against a
// held downstream: every answer is 202 or 503, each 202 is one gateway
// receipt, and tally renders at most twice more (its wakes folded into
// one follow-up) ending on the latest payload.
func TestConcurrentDeliveriesLoseNone(t *testing.T) {
	const queue = 4
	h := newHooks(t, hooksOpt{queue: queue})
	held, err := lock.Acquire(context.Background(), h.v.StatePath("lock"), time.Minute, "test")
	if err != nil {
		t.Fatal(err)
	}
	base := len(h.receipts())
	results := make(chan [2]string, 50)
	var wg sync.WaitGroup
	fire := func(n int) {
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				var orders []string
				for j := 0; j <= i; j++ {
					orders = append(orders, fmt.Sprintf(`{"id":"o%d"}`, j))
				}
				code, hd, doc := h.post(`{"orders":[`+strings.Join(orders, ",")+`]}`, nil)
				id, _ := doc["delivery"].(string)
				if code == 503 && hd.Get("Retry-After") == "" {
					id = "503 without Retry-After"
				}
				results <- [2]string{fmt.Sprint(code), id}
			}(i)
		}
	}
	fire(50)
	// Every refusal arrives while the lock is held; the waiting ones
	// need it.
	refusedSeen := 0
	for refusedSeen < 50-queue {
		var r [2]string
		select {
		case r = <-results:
		case <-time.After(2 * time.Minute):
			t.Fatalf("%d refusals in 2 minutes with %d slots taken: a full queue must answer 503 at once", refusedSeen, queue)
		}
		if r[0] != "503" || r[1] != "" {
			t.Fatalf("an answer while the vault was locked: %v", r)
		}
		refusedSeen++
	}
	var st status
	h.get("/status", &st)
	if st.Queue.InFlight != queue {
		t.Fatalf("%d deliveries in flight, want %d", st.Queue.InFlight, queue)
	}
	held.Release()
	accepted := map[string]bool{}
	for i := 0; i < queue; i++ {
		r := <-results
		if r[0] != "202" || r[1] == "" {
			t.Fatalf("a waiting delivery: %v", r)
		}
		accepted[r[1]] = true
	}
	wg.Wait()
	h.idle()
	gw := 0
	for _, r := range h.receipts()[base:] {
		if r.Node == "events" {
			gw++
			if !accepted[r.Receipt] {
				t.Fatalf("a gateway receipt no sender was told of: %v", r)
			}
		}
	}
	if gw != queue {
		t.Fatalf("%d gateway receipts for %d accepted deliveries", gw, queue)
	}

	// Round two: a held downstream, the queue free.
	base = len(h.receipts())
	h.hold("tally")
	fire(50)
	wg.Wait()
	close(results)
	accepted = map[string]bool{}
	n503 := 0
	for r := range results {
		switch r[0] {
		case "202":
			if accepted[r[1]] {
				t.Fatalf("two deliveries were told one receipt %s", r[1])
			}
			accepted[r[1]] = true
		case "503":
			if r[1] != "" {
				t.Fatalf("a 503 %v", r)
			}
			n503++
		default:
			t.Fatalf("an answer neither 202 nor 503: %v", r)
		}
	}
	if len(accepted)+n503 != 50 {
		t.Fatalf("%d accepted + %d refused of 50", len(accepted), n503)
	}
	h.release("tally")
	h.idle()
	gw, tally := 0, 0
	for _, r := range h.receipts()[base:] {
		switch r.Node {
		case "events":
			gw++
			if !accepted[r.Receipt] {
				t.Fatalf("a gateway receipt no sender was told of: %v", r)
			}
		case "tally":
			tally++ // any receipt: a wake not folded would be one more (a skip)
		}
	}
	if gw != len(accepted) {
		t.Fatalf("%d gateway receipts for %d accepted deliveries", gw, len(accepted))
	}
	if tally > 2 {
		t.Fatalf("tally has %d receipts for %d deliveries: its wakes did not coalesce", tally, len(accepted))
	}
	orders := strings.Count(h.file("events", "orders.json"), `"id"`)
	if got, want := h.file("tally", "count.json"), fmt.Sprintf(`{"count":%d}`+"\n", orders); got != want {
		t.Fatalf("tally holds %q; the latest payload has %d orders", got, orders)
	}
	t.Logf("round two: %d accepted, %d refused, tally ran %d times", len(accepted), n503, tally)
	h.consistent()
}

// TestScheduleFiresAtItsMinute: the events gateway's cron (30 9 * * *)
// fires at 09:30 of the injected clock, not before: a tick is published
// into the gateway and the sweep renders it.
func TestScheduleFiresAtItsMinute(t *testing.T) {
	clock := serve.NewManualClock(time.Date(2026, 3, 2, 9, 28, 0, 0, time.UTC))
	h := newHooks(t, hooksOpt{clock: clock})
	want := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	if code, _, doc := h.post(`{"orders":[{"id":"a"}],"notes":[{"text":"n"}]}`, nil); code != 202 {
		t.Fatalf("a delivery: %d %v", code, doc)
	}
	h.idle()
	h.waitFor("the scheduler to plan 09:30", func() bool {
		p := clock.Pending()
		return len(p) > 0 && p[0].Equal(want)
	})
	base := len(h.receipts())
	clock.Set(want.Add(-time.Second))
	if p := clock.Pending(); len(p) == 0 || !p[0].Equal(want) {
		t.Fatalf("pending timers %v after 09:29:59, want the first at 09:30", p)
	}
	clock.Set(want)
	h.waitFor("the sweep to render the 09:30 fire", func() bool {
		return strings.Contains(h.file("sweep", "swept.json"), `"fired_at":"2026-03-02T09:30:00Z"`)
	})
	h.idle()
	recs := h.receipts()[base:]
	if len(recs) != 2 || recs[0].Node != "events" || recs[0].Wake != "external" || recs[0].Status != "rendered" {
		t.Fatalf("receipts after 09:30: %v", recs)
	}
	for _, r := range recs[1:] {
		if r.Node != "sweep" {
			t.Fatalf("the tick woke %s (only the schedule facet moved): %v", r.Node, recs)
		}
	}
	if p := clock.Pending(); len(p) == 0 || !p[len(p)-1].Equal(want.Add(24*time.Hour)) {
		t.Fatalf("pending after the fire %v, want the next day's 09:30", p)
	}
}

// TestReadOnlyViews: /health, /status, /receipts and the wiki (with the
// CSP its pages carry) are read-only.
func TestReadOnlyViews(t *testing.T) {
	h := newHooks(t, hooksOpt{})
	var health map[string]any
	if resp := h.get("/health", &health); resp.StatusCode != 200 || health["ok"] != true {
		t.Fatalf("/health: %d %v", resp.StatusCode, health)
	}
	var rc struct {
		Receipts []struct{ Node, Status string } `json:"receipts"`
	}
	h.get("/receipts?node=report&limit=5", &rc)
	if len(rc.Receipts) != 1 || rc.Receipts[0].Node != "report" || rc.Receipts[0].Status != "rendered" {
		t.Fatalf("/receipts?node=report: %+v", rc)
	}
	if resp := h.get("/receipts?limit=0", nil); resp.StatusCode != 400 {
		t.Fatalf("/receipts?limit=0: %d", resp.StatusCode)
	}
	for _, p := range []string{"/status", "/receipts", "/health", "/wiki/x.html"} {
		resp, err := client.Post(h.url+p, "application/json", strings.NewReader("{}"))
		if err != nil || resp.StatusCode != 405 {
			t.Fatalf("POST %s: %v %v, want 405", p, resp, err)
		}
	}
	// A wiki page, published as the wiki pipeline would: it carries the
	// layout's CSP, and the server sends the same one.
	layout, err := os.ReadFile(filepath.Join(refdata.RepoRoot(t), "wiki/shell/layout.html"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]+)"`).FindSubmatch(layout)
	if m == nil || string(m[1]) != serve.CSP {
		t.Fatalf("the wiki layout's CSP %q is not the one served %q", m, serve.CSP)
	}
	page := t.TempDir()
	os.MkdirAll(filepath.Join(page, "concepts"), 0o755)
	os.WriteFile(filepath.Join(page, "concepts", "a.html"), []byte("<!DOCTYPE html><title>A</title><p>a page</p>\n"), 0o644)
	if _, err := h.v.Publish(context.Background(), serve.WikiNode, page, vault.PublishOptions{Who: "test"}); err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(h.url + "/wiki/concepts/a.html")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "a page") || resp.Header.Get("Content-Security-Policy") != serve.CSP ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/wiki/concepts/a.html: %d %v %q", resp.StatusCode, resp.Header, b)
	}
	resp, _ = client.Get(h.url + "/wiki/")
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `href="/wiki/concepts/"`) || resp.Header.Get("Content-Security-Policy") != serve.CSP {
		t.Fatalf("/wiki/: %d %q", resp.StatusCode, b)
	}
	for _, p := range []string{"/wiki/nope.html", "/wiki/concepts/../../x"} {
		if resp, _ := client.Get(h.url + p); resp.StatusCode != 404 && resp.StatusCode != 400 {
			t.Fatalf("GET %s: %d", p, resp.StatusCode)
		}
	}
}

// TestCadenceAndValidUntilFireOnTime: the shop's self-driven clock (every
// 1 hour, its status valid_until 90 minutes after each render) ticks at
// 13:00 of the injected clock, an hour after its cold start, and skips
// (nothing moved); at 13:30:01 its valid_until has lapsed, so it renders
// and its board follows.
func TestCadenceAndValidUntilFireOnTime(t *testing.T) {
	if out, err := exec.Command("date", "-u", "-d", "2026-01-01T12:00:00Z + 90 minutes", "+%H:%M").Output(); err != nil || strings.TrimSpace(string(out)) != "13:30" {
		if os.Getenv("CI") == "true" {
			t.Fatal("the shop fixture's render needs GNU date -d")
		}
		t.Skip("the shop fixture's render needs GNU date -d")
	}
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := serve.NewManualClock(start)
	h := newHooks(t, hooksOpt{fixture: "shop", clock: clock})
	tick := start.Add(time.Hour)
	h.waitFor("the scheduler to plan 13:00", func() bool {
		p := clock.Pending()
		return len(p) > 0 && p[0].Equal(tick)
	})
	base := len(h.receipts())
	clock.Set(tick.Add(-time.Second))
	if p := clock.Pending(); len(p) == 0 || !p[0].Equal(tick) {
		t.Fatalf("pending %v at 12:59:59, want the first at 13:00", p)
	}
	clock.Set(tick)
	h.waitFor("the clock's 13:00 tick", func() bool { return len(h.receipts()) > base })
	h.idle()
	recs := h.receipts()[base:]
	if len(recs) != 1 || recs[0].Node != "clock" || recs[0].Wake != "self" || recs[0].Status != "skipped" {
		t.Fatalf("receipts at 13:00: %v, want one skipped self tick of clock", recs)
	}
	lapse := start.Add(90*time.Minute + time.Second)
	h.waitFor("the scheduler to plan the valid_until lapse", func() bool {
		for _, p := range clock.Pending() {
			if p.Equal(lapse) {
				return true
			}
		}
		return false
	})
	base = len(h.receipts())
	clock.Set(lapse)
	h.waitFor("the board to show the renewed status", func() bool {
		return strings.Contains(h.file("board", "shown.json"), `"valid_until":"2026-01-01T15:00:01Z"`)
	})
	h.idle()
	got := map[string]string{}
	for _, r := range h.receipts()[base:] {
		got[r.Node] = r.Status + "/" + r.Wake
	}
	if got["clock"] != "rendered/self" || got["board"] != "rendered/input" || len(got) != 2 {
		t.Fatalf("receipts after the lapse: %v", got)
	}
}
