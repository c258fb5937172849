#!/usr/bin/env bash
# What one large `prose ingest` (offline engine) leaves in the object store
# and how much memory it takes: for each N in $NS (default "1000 5000")
# generated Markdown sources of about $SIZE bytes (default 1000), a fresh
# vault ingests them all in one run. Reported per run: wall seconds, peak
# RSS (/usr/bin/time -v), .git size, working-tree size (published/),
# unreachable objects (git fsck --unreachable --no-reflogs) and the objects
# in packs. With BEFORE=REV the same runs are made with prose built from
# REV first, so both sides come from one run on one machine.
#
#   BEFORE=cb6e27d NS="1000 5000" scripts/bench-ingest-store.sh
#
# PROSE_HEAPPROFILE is set for the current build: heap-N.pb.gz in $OUT
# (default: a temporary directory, removed) is a heap profile at the peak
# (go tool pprof -sample_index=inuse_space -top heap-N.pb.gz).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
out=${OUT:-}
trap 'rm -rf "$work"' EXIT
go build -o "$work/prose-after" ./cmd/prose
go build -o "$work/wikicorpus" ./internal/cmd/wikicorpus
sides=after
if [ -n "${BEFORE:-}" ]; then
  mkdir "$work/src-before"
  git archive "$BEFORE" | tar -x -C "$work/src-before"
  (cd "$work/src-before" && go build -o "$work/prose-before" ./cmd/prose)
  sides="before after"
fi
export PROSE_NOW=2026-01-31
printf '| sources | build | wall s | peak RSS MiB | .git MiB | working tree MiB | unreachable objects | packed objects |\n|---|---|---|---|---|---|---|---|\n'
for n in ${NS:-1000 5000}; do
  "$work/wikicorpus" -n "$n" -size "${SIZE:-1000}" -out "$work/corpus-$n"
  for side in $sides; do
    v="$work/v-$n-$side"
    "$work/prose-$side" init "$v" >/dev/null
    prof=()
    if [ "$side" = after ] && [ -n "$out" ]; then
      mkdir -p "$out"
      prof=(env PROSE_HEAPPROFILE="$out/heap-$n.pb.gz")
    fi
    /usr/bin/time -v -o "$work/time" "${prof[@]}" "$work/prose-$side" --vault "$v" ingest "$work/corpus-$n" >"$work/out" 2>"$work/err" || { tail -5 "$work/err"; exit 1; }
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$work/time" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
    rss=$(awk -F': ' '/Maximum resident set size/{printf "%.0f", $2/1024}' "$work/time")
    git_mb=$(du -sm "$v/.git" | cut -f1)
    wt_mb=$(du -sm "$v/published" | cut -f1)
    unreach=$(git -C "$v" fsck --unreachable --no-reflogs --no-progress 2>/dev/null | wc -l)
    packed=$(git -C "$v" count-objects -v | awk '/^in-pack:/{print $2}')
    printf '| %d | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$side" "$wall" "$rss" "$git_mb" "$wt_mb" "$unreach" "$packed"
    rm -rf "$v"
  done
  rm -rf "$work/corpus-$n"
done
