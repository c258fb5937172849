#!/usr/bin/env bash
# Peak memory and throughput of `prose ingest` (offline engine) at scale:
# each input is ingested into a fresh vault, $RUNS times (default 3), and
# the median is printed: peak RSS (MB, /usr/bin/time), wall MB/s and CPU
# MB/s (bytes over user + system seconds: the figure a loaded machine
# distorts least). The inputs:
#
#   notes300     300 generated Markdown notes of about 8 KB (wikicorpus)
#   docs1000     the 1,000 real documents nearest 12 KB of /usr/share/doc and Go's
#                doc directory (HTML, Markdown, text), about 10 MB in all
#   manual.html  one HTML manual of just under 16 MiB, many headings
#   plain.txt    one text of just under 16 MiB, a heading every 4 MiB
#   onepara.txt  one text of just under 16 MiB: a single paragraph
#
# (scripts/bench_ingest_scale.py makes the real-document inputs; the
# Valgrind, Node.js and pip documentation is left out.) With BEFORE=REV,
# prose built from REV runs the same inputs in the same minutes, and the
# ratios are printed. The goals (docs/limits.md): under 256 MB for each,
# at least 5 MB/s. INPUTS="manual.html plain.txt" runs those inputs alone.
#
#   RUNS=3 BEFORE=197b5dd scripts/bench-ingest-scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=${RUNS:-3}
go build -o "$work/prose-after" ./cmd/prose
go build -o "$work/wikicorpus" ./internal/cmd/wikicorpus
sides=after
if [ -n "${BEFORE:-}" ]; then
  mkdir "$work/src-before"
  git archive "$BEFORE" | tar -x -C "$work/src-before"
  (cd "$work/src-before" && go build -o "$work/prose-before" ./cmd/prose)
  sides="before after"
fi
mkdir -p "$work/in"
"$work/wikicorpus" -n 300 -size 8000 -out "$work/in/notes300" >/dev/null
python3 scripts/bench_ingest_scale.py "$work/in"
python3 - "$work/in/onepara.txt" <<'PY'
import random, sys
words = open("/usr/share/common-licenses/GPL-3").read().split()
r, out, n = random.Random(1), [], 0
while n < (16 << 20) - 100:
    w = words[r.randrange(len(words))]
    out.append(w)
    n += len(w) + 1
open(sys.argv[1], "w").write(" ".join(out)[: (16 << 20) - 100] + "\n")
PY
export PROSE_NOW=2026-01-31

# Each run gets a vault of its own, removed only at the end: on a file
# system that delays reusing the inodes of files deleted in the last
# minutes (ext4 without a journal, as here), a vault created right after
# the previous run's was removed pays a scan of those inodes for every
# file it creates, which doubled the system time of notes300 and is no
# cost of prose.
nvault=0
one() { # one SIDE INPUT: "peakMB wallMBps cpuMBps userMBps" of one ingest into a fresh vault
  local bin=$work/prose-$1 in=$work/in/$2
  nvault=$((nvault + 1))
  local v=$work/vaults/$nvault
  mkdir -p "$work/vaults"
  "$bin" init "$v" >/dev/null
  local bytes
  bytes=$(find "$in" -type f -printf '%s\n' | awk '{s+=$1} END{print s}')
  if ! /usr/bin/time -f "%e %M %U %S" -o "$work/time" "$bin" --vault "$v" ingest "$in" >"$work/out" 2>"$work/err"; then
    echo "refused 0 0 0"
    return
  fi
  read -r secs kib usr sys < "$work/time"
  awk -v k="$kib" -v b="$bytes" -v s="$secs" -v u="$usr" -v y="$sys" \
    'BEGIN{printf "%.0f %.2f %.2f %.2f\n", k*1024/1e6, b/1e6/s, b/1e6/(u+y), b/1e6/u}'
}
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

# The sides take turns run by run (before, after, before, after …), so a
# change of the machine's load during an input weighs on both alike.
# "user MB/s" leaves out the system time, which on this shared machine
# follows what other processes deleted in the last minutes (see above).
printf '| input | MB | build | peak RSS MB | wall MB/s | CPU MB/s | user MB/s | load |\n|---|---|---|---|---|---|---|---|\n'
for input in ${INPUTS:-notes300 docs1000 manual.html plain.txt onepara.txt}; do
  mb=$(find "$work/in/$input" -type f -printf '%s\n' | awk '{s+=$1} END{printf "%.1f", s/1e6}')
  for side in $sides; do : > "$work/runs-$side"; done
  for _ in $(seq "$runs"); do
    for side in $sides; do one "$side" "$input" >> "$work/runs-$side"; done
  done
  for side in $sides; do
    rss=$(cut -d' ' -f1 "$work/runs-$side" | median)
    wall=$(cut -d' ' -f2 "$work/runs-$side" | median)
    cpu=$(cut -d' ' -f3 "$work/runs-$side" | median)
    usr=$(cut -d' ' -f4 "$work/runs-$side" | median)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$input" "$mb" "$side" "$rss" "$wall" "$cpu" "$usr" "$(cut -d' ' -f1 /proc/loadavg)"
    eval "rss_$side=$rss cpu_$side=$cpu usr_$side=$usr"
  done
  if [ -n "${BEFORE:-}" ] && [ "$rss_before" != 0 ]; then
    printf '| %s | | after/before | %s | | %s | %s | |\n' "$input" \
      "$(awk -v a="$rss_after" -v b="$rss_before" 'BEGIN{printf "%.2f", a/b}')" \
      "$(awk -v a="$cpu_after" -v b="$cpu_before" 'BEGIN{printf "%.2f", a/b}')" \
      "$(awk -v a="$usr_after" -v b="$usr_before" 'BEGIN{printf "%.2f", a/b}')"
  fi
done
