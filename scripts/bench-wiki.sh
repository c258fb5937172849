#!/usr/bin/env bash
# Benchmarks of the wiki through the CLI, one process per operation, on a
# 1,000-page and a 10,000-page wiki (10 pages per folder), with the
# 10,000/1,000 ratio of each: new, write-slot, set-meta (medians of 21),
# search (median of 100 queries), lint and rebuild (one run each, rebuild
# after a template change so every shell is re-rendered). Goal: writes and
# searches cost no more than 1.5× at ten times the size.
# Usage: scripts/bench-wiki.sh [-sizes 1000,10000] [-runs N] [-queries N]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)"
work="$(mktemp -d)"
trap 'rm -rf "$bin" "$work"' EXIT
go build -o "$bin/prose" ./cmd/prose
go build -o "$bin/wikibench" ./internal/cmd/wikibench
echo "# prose wiki benchmarks — $(date -u +%FT%TZ), $(nproc) cores"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$bin/wikibench" -prose "$bin/prose" -dir "$work" "$@"
