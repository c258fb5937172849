#!/usr/bin/env bash
# Runs every fuzz target of the module for a short while (FUZZTIME, default
# 10s each), so none rots. Targets are discovered per package with
# `go test -list`, so a new Fuzz function is included without editing this
# file. A failure prints the fuzzer's output (with the input it wrote under
# testdata/fuzz/) and stops with exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-10s}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
n=0
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    n=$((n + 1))
    printf 'fuzz %-45s %-28s %s\n' "$pkg" "$target" "$fuzztime"
    if ! go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" >"$log" 2>&1; then
      cat "$log"
      echo "fuzz: $target in $pkg failed" >&2
      exit 1
    fi
  done
done
echo "fuzz: $n targets, $fuzztime each, no failure"
