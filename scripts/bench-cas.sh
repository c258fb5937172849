#!/usr/bin/env bash
# bench-cas.sh measures cas.Store.Put against this machine's physical limit:
# (a) a fsync'd Put of a 256 MiB stream into a fresh store, (b) raw BLAKE3
# hashing of 256 MiB in memory, (c) a fsync'd sequential write of 256 MiB in
# 1 MiB chunks. It prints MB/s for each, the limit min(b, c) and the ratio
# Put/limit (goal: at least 70%). Files go to $TMPDIR (default /tmp).
#
# Usage: scripts/bench-cas.sh [-size MiB] [-runs N] [-dir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/benchcmd" ./cas/internal/benchcmd
"$bin/benchcmd" "$@"
