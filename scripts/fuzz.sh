#!/usr/bin/env bash
# Runs every fuzz target of the module for a short while (FUZZTIME, default
# 10s each), so none rots. Targets are discovered per package with
# `go test -list`, so a new Fuzz function is included without editing this
# file. A failure prints the fuzzer's output (with the input it wrote under
# testdata/fuzz/) and stops with exit 1.
#
# Minimizing a new input is bounded (FUZZMINIMIZETIME, default 5s) so the
# fuzzer does not spend a target's whole budget on it. Go's coordinator can
# end a duration-bounded run with "context deadline exceeded" although no
# input failed (go.dev/issue/75804, a race at the deadline): such a run —
# that error and no failing input written — is run once more, and fails
# only if it happens again.
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
    ok=0
    for attempt in 1 2; do
      if go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" \
        -fuzzminimizetime "${FUZZMINIMIZETIME:-5s}" >"$log" 2>&1; then
        ok=1
        break
      fi
      if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
        echo "fuzz: $target: the coordinator's deadline race (no failing input); running it again"
        continue
      fi
      break
    done
    if [ "$ok" != 1 ]; then
      cat "$log"
      echo "fuzz: $target in $pkg failed" >&2
      exit 1
    fi
  done
done
echo "fuzz: $n targets, $fuzztime each, no failure"
