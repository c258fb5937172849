#!/usr/bin/env bash
# Benchmark of `prose ingest` with the offline engine: a generated corpus
# of 500 Markdown files (about 5 MB) into a fresh vault — total time, MB/s,
# pages per second, peak memory — then one small file into that vault
# against the same file into an empty vault (the goal: under 2x).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mkdir -p bin
go build -o bin/prose ./cmd/prose
go build -o bin/wikicorpus ./internal/cmd/wikicorpus
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin/wikicorpus -n "${N:-500}" -size "${SIZE:-10000}" -out "$work/corpus"
bytes=$(du -sb "$work/corpus" | cut -f1)
export PROSE_NOW=2026-01-31

timed() { # timed LABEL CMD…: prints wall seconds, peak RSS (KiB), CPU seconds (user+sys)
  local label=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$work/time" "$@" > "$work/out" 2>"$work/err" || { cat "$work/err"; exit 1; }
  read -r secs kib usr sys < "$work/time"
  echo "$label $secs $kib $(awk -v u="$usr" -v s="$sys" 'BEGIN{printf "%.2f", u+s}')"
}

bin/prose init "$work/big" >/dev/null
read -r _ secs kib cpu < <(timed corpus bin/prose --vault "$work/big" ingest "$work/corpus")
pages=$(grep -c '^  created' "$work/out" || true)
mb=$(awk -v b="$bytes" 'BEGIN{printf "%.2f", b/1e6}')
printf '| offline ingest, %d files | %s MB | %s s wall (%s s CPU) | %s MB/s | %s pages | %s pages/s | peak %s MiB | load %s |\n' \
  "${N:-500}" "$mb" "$secs" "$cpu" "$(awk -v b="$bytes" -v s="$secs" 'BEGIN{printf "%.2f", b/1e6/s}')" "$pages" \
  "$(awk -v p="$pages" -v s="$secs" 'BEGIN{printf "%.0f", p/s}')" "$((kib / 1024))" "$(cut -d' ' -f1 /proc/loadavg)"

best() { # best of 5 ingests of one new small file into vault $1 (in place:
  # a copied vault would have every index stat entry stale and be re-hashed)
  local v=$1 b=999
  for i in 1 2 3 4 5; do
    printf '# small note %s\n\nA small note about billing and caching, number %s.\n\n1. First.\n2. Second.\n' "$i" "$i" > "$work/small-$i.md"
    read -r _ s _ < <(timed small bin/prose --vault "$v" ingest "$work/small-$i.md")
    b=$(awk -v a="$b" -v c="$s" 'BEGIN{print (c<a)?c:a}')
  done
  echo "$b"
}
bin/prose init "$work/empty" >/dev/null
small_empty=$(best "$work/empty")
small_big=$(best "$work/big")
printf '| one small file, empty vault | %s s |\n| one small file, %d-source vault | %s s | ratio %s (goal < 2) |\n' \
  "$small_empty" "${N:-500}" "$small_big" "$(awk -v a="$small_big" -v b="$small_empty" 'BEGIN{printf "%.2f", a/b}')"
