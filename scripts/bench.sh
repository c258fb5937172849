#!/usr/bin/env bash
# Benchmarks of the storage core, each against its baseline in the same run
# on the same machine (fsync on):
#   - first publish of 1,000 / 10,000 / 20,000 new files (CLI, fresh vault)
#     vs `git add -A && git commit` of the same tree in a fresh repository,
#     and how the cost grows (20k/10k);
#   - on a nested 10,000-file tree and a flat 100 x 100 tree of 1 KiB JSON
#     files, after a one-file in-place edit: the full-scan CLI republish vs a
#     bare walk+lstat run as its own process and vs `git add -A && git
#     commit`; the informed CLI republish (--changed FILE) vs its floor
#     (process start plus the four flushes the crash order needs, measured
#     here) and vs `git add FILE && git commit`;
#   - the same through the package API (full scan, informed, skipped);
#   - `prose cas put` of 256 MiB vs the physical limit (raw BLAKE3, fsync'd writes);
#   - fingerprint throughput on a 10 MB JSON truth;
#   - `prose receipts verify` and `prose log` on a 5,000-receipt chain;
#   - reading history: the same at 5,000 and 50,000 receipts (historybench,
#     HISTORY_CHAINS to change the sizes).
# Usage: scripts/bench.sh [-files N] [-runs N] [-chain N] [-first 1000,10000,20000]
#        [-sections api,first,shapes,chain]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)"
work="$(mktemp -d)"
trap 'rm -rf "$bin" "$work"' EXIT
go build -o "$bin/prose" ./cmd/prose
go build -o "$bin/vaultbench" ./internal/cmd/vaultbench
go build -o "$bin/casbench" ./cas/internal/benchcmd
go build -o "$bin/historybench" ./internal/cmd/historybench

echo "# prose benchmarks — $(date -u +%FT%TZ), $(nproc) cores, $(git --version)"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$bin/vaultbench" -prose "$bin/prose" -dir "$work" "$@"

echo "## cas put of 256 MiB vs the physical limit"
"$bin/casbench"
# The same through the CLI, in a fresh vault: one warm-up, then the median
# of three puts (the store is emptied between them).
"$bin/prose" init "$work/casvault" >/dev/null
head -c $((256 << 20)) /dev/urandom > "$work/blob"
sync
times=()
for i in 0 1 2 3; do
  "$bin/prose" --vault "$work/casvault" cas gc --everything >/dev/null
  sync
  start=$(date +%s%N)
  "$bin/prose" --vault "$work/casvault" cas put "$work/blob" >/dev/null
  end=$(date +%s%N)
  [ "$i" -gt 0 ] && times+=($((end - start)))
done
med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
awk -v ns="$med" 'BEGIN { printf "%-48s %9.1f MB/s  (%.0f ms, CLI process, median of 3)\n", "prose cas put FILE (256 MiB)", 256*1.048576/(ns/1e9), ns/1e6 }'
echo

echo "## Fingerprint throughput (decode + reduce + @atomic and facets, 10 MB JSON truth)"
go test -run '^$' -bench 'BenchmarkFingerprint10MB' -benchtime 5x ./canon/ | grep -E '^Benchmark'
echo

"$bin/historybench" -prose "$bin/prose" -chains "${HISTORY_CHAINS:-5000,50000}"
