package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/internal/lock"
	"github.com/prose-store/prose/reactor"
	"github.com/prose-store/prose/serve"
)

// defaultServeAddr is where prose serve listens without --addr: loopback.
const defaultServeAddr = "127.0.0.1:8417"

// errServeStopped is a serve that stopped on SIGINT or SIGTERM as asked:
// it said so itself, and exits 0.
var errServeStopped = errors.New("serve stopped")

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "keep the vault current: take gateway webhooks, fire schedules and cadences, render what moves",
		Description: "Serves the active manifest (prose compile --activate). Each gateway's ### Receives route\n" +
			"(POST /path) takes JSON deliveries: recorded as the gateway's world-model, then answered 202\n" +
			"with the delivery id (its receipt) before anything downstream renders. A gateway whose secret\n" +
			"is set in PROSE_WEBHOOK_SECRET_<GATEWAY> (upper case, other characters _) checks signatures:\n" +
			"whsec_… is Standard Webhooks, anything else GitHub's X-Hub-Signature-256. ### Schedule cron\n" +
			"items and self-driven cadences fire at their times. GET /health, /status, /receipts and the\n" +
			"wiki under /wiki/ are read-only. SIGINT or SIGTERM stops at a safe point. See docs/runtime.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: defaultServeAddr, Usage: "listen on `HOST:PORT` (port 0 picks a free one)"},
			&cli.IntFlag{Name: "queue", Value: serve.DefaultQueue, Usage: "deliveries in flight before the server answers 503 (`N`)"},
		},
		Action: runServe,
	}
}

// secretEnv is the environment variable holding a gateway's webhook secret.
func secretEnv(gateway string) string {
	var b strings.Builder
	b.WriteString("PROSE_WEBHOOK_SECRET_")
	for _, r := range strings.ToUpper(gateway) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func runServe(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErrorf("serve takes no arguments (--addr HOST:PORT sets where it listens)")
	}
	if c.Int("queue") < 1 {
		return usageErrorf("serve --queue must be at least 1")
	}
	rs, err := loadRuntime(c, "serve")
	if err != nil {
		return err
	}
	defer rs.set.close()
	v := rs.set.vault
	held, err := lock.TryAcquire(v.StatePath("serve.lock"), "prose serve")
	if err != nil {
		var he *lock.HeldError
		if errors.As(err, &he) {
			who := "another prose serve"
			if h := he.Holder; h != nil {
				who = fmt.Sprintf("prose serve (pid %d on %s, since %s)", h.PID, h.Host, h.Since.Local().Format("15:04:05"))
			}
			return fmt.Errorf("serve: %s already serves this vault; stop it first (renders are serialized per vault)", who)
		}
		return fmt.Errorf("serve: %w", err)
	}
	defer held.Release()
	m, _ := forme.Compile(rs.set.project)
	srv, err := serve.New(serve.Config{
		Vault:      v,
		Graph:      rs.graph,
		Ingress:    m.Ingress,
		Renderer:   reactor.Renderers(&reactor.CommandRenderer{Dir: rs.set.dir}),
		Secret:     func(g string) string { return os.Getenv(secretEnv(g)) },
		SecretName: secretEnv,
		Queue:      c.Int("queue"),
		Log:        c.App.ErrWriter,
		WorkDir:    v.StatePath("run"),
		Who:        "prose serve",
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return usageErrorf("serve --addr %s: %v", c.String("addr"), err)
	}
	w := c.App.ErrWriter
	for _, n := range rs.notes {
		fmt.Fprintln(w, "note: "+n)
	}
	for _, n := range srv.Notes() {
		fmt.Fprintln(w, "note: "+n)
	}
	for _, r := range srv.Routes() {
		fmt.Fprintln(w, "serve: "+r)
	}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(w, "serve: warning: listening beyond loopback (%s); routes without a secret take any sender's payload\n", host)
	}
	fmt.Fprintf(w, "serve: listening on http://%s (SIGINT or SIGTERM stops)\n", ln.Addr())
	if err := srv.Run(c.Context, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if c.Context.Err() != nil {
		return errServeStopped
	}
	return nil
}
