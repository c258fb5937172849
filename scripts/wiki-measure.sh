#!/usr/bin/env bash
# Measure a wiki made from real collections, with a reader independent of
# prose's own (scripts/wiki_measure.py, Python's html.parser over the raw
# files): a fresh vault, one `prose ingest` of every collection given (one
# run), then per collection the share of its 8-word runs readable in the
# wiki, search recall over its code spans, and the wiki's page checks;
# peak RSS and MB/s of the ingest from /usr/bin/time.
#
#   scripts/wiki-measure.sh NAME=DIR [NAME=DIR …]
#
# Every NAME=DIR given is ingested in the same one run (two collections
# together: scripts/wiki-measure.sh a=DIR1 b=DIR2); run the script once
# per collection to measure them apart. MEASURE_VAULT=DIR keeps the vault
# there (for screenshots) instead of a scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
[ $# -gt 0 ] || { echo "usage: scripts/wiki-measure.sh NAME=DIR [NAME=DIR …]" >&2; exit 2; }
mkdir -p bin
go build -o bin/prose ./cmd/prose
prose="$root/bin/prose"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
vault=${MEASURE_VAULT:-$scratch/vault}
[ ! -e "$vault" ] || { echo "wiki-measure: $vault exists; name a new directory" >&2; exit 2; }
"$prose" init "$vault" >/dev/null
dirs=()
bytes=0
for a in "$@"; do
  d=${a#*=}
  dirs+=("$d")
  # The sources' bytes (the files ingest reads), not the images beside them.
  b=$(find -L "$d" -type f \( -iname '*.md' -o -iname '*.markdown' -o -iname '*.txt' -o -iname '*.html' -o -iname '*.htm' -o -iname '*.xhtml' -o -iname '*.json' -o -iname '*.jsonl' \) -not -path '*/.*' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  bytes=$((bytes + b))
done
/usr/bin/time -v "$prose" --vault "$vault" ingest "${dirs[@]}" >"$scratch/out" 2>"$scratch/time" || { cat "$scratch/time" >&2; exit 1; }
rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$scratch/time")
secs=$(awk -F': ' '/Elapsed \(wall/ {print $2}' "$scratch/time" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
# A Python that has markdown-it (Debian's python3-markdown-it) renders
# Markdown sources as a reader sees them; any python3 otherwise.
py=python3
if ! python3 -c 'import markdown_it' 2>/dev/null && /usr/bin/python3 -c 'import markdown_it' 2>/dev/null; then
  py=/usr/bin/python3
fi
"$py" scripts/wiki_measure.py "$prose" "$vault" "$@"
lint=$("$prose" --vault "$vault" wiki lint 2>&1 | tail -1 || true)
# CPU time (user + sys) as well as wall time: on a loaded machine the
# wall clock measures the others' work.
cpu=$(awk -F': ' '/User time|System time/ { c += $2 } END { print c + 0 }' "$scratch/time")
awk -v b="$bytes" -v s="$secs" -v c="$cpu" -v r="$rss" 'BEGIN { printf "ingest: %.2f MB in %.1f s wall (%.2f MB/s), %.1f s CPU (%.2f MB/s of CPU), peak RSS %.0f MB\n", b/1e6, s, (s > 0 ? b/1e6/s : 0), c, (c > 0 ? b/1e6/c : 0), r/1024 }'
echo "lint: $lint"
