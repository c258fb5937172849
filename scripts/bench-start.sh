#!/usr/bin/env bash
# Start-time benchmark, in one run: builds prose and a Go hello-world the
# same way (and both again stripped: -trimpath -ldflags='-s -w'), then
# reports the package initializers' total (GODEBUG=inittrace), `prose
# --version` against hello-world, `prose wiki write-slot` / `set-meta` on a
# 1,000-page wiki against `git add FILE && git commit` in a git repository
# of the same pages (and against the same git flushing its objects and
# refs, `-c core.fsync=committed,reference`, since prose makes a receipt
# durable before it returns and git by default does not), and `prose wiki
# search` against `prose --version`.
# The two sides of each ratio run alternately; figures are medians.
# Goals: init ≤ 5 ms, --version ≤ 5× hello, write-slot/set-meta ≤ 1.5×
# git, search ≤ 2× --version.
# Usage: scripts/bench-start.sh [-runs N] [-pages N]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)"
work="$(mktemp -d)"
trap 'rm -rf "$bin" "$work"' EXIT
mkdir -p "$bin/hello"
cat >"$bin/hello/main.go" <<'GO'
package main

import "fmt"

func main() { fmt.Println("hello") }
GO
printf 'module hello\n\ngo 1.26\n' >"$bin/hello/go.mod"
# urfave_cli_no_docs leaves out urfave/cli's own man-page and Markdown
# output (prose writes its docs with internal/clidocs), and with it
# blackfriday and its initializers; the release build sets it too. Both
# sides build with no cgo, as the release build does: with cgo, the net
# package's resolver makes prose a dynamically linked binary (the dynamic
# loader and libc cost every start ≈ 0.6 ms), while hello-world is static
# either way.
export CGO_ENABLED=0
go build -tags urfave_cli_no_docs -o "$bin/prose" ./cmd/prose
go build -tags urfave_cli_no_docs -trimpath -ldflags='-s -w' -o "$bin/prose-stripped" ./cmd/prose
(cd "$bin/hello" && go build -o "$bin/hello-plain" . && go build -trimpath -ldflags='-s -w' -o "$bin/hello-stripped" .)
go build -o "$bin/startbench" ./internal/cmd/startbench
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
echo "# prose start time — $(date -u +%FT%TZ), $(nproc) cores, $(go version | cut -d' ' -f3)"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# binaries (CGO_ENABLED=0): prose $(stat -c %s "$bin/prose") B, stripped $(stat -c %s "$bin/prose-stripped") B; hello $(stat -c %s "$bin/hello-plain") B"
echo
"$bin/startbench" -prose "$bin/prose" -prose-stripped "$bin/prose-stripped" -hello "$bin/hello-plain" -hello-stripped "$bin/hello-stripped" -dir "$work" "$@"
