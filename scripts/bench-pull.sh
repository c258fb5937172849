#!/usr/bin/env bash
# prose pull beside git pull of the same history, from a loopback remote
# (git daemon on 127.0.0.1), in the same run. Two histories arrive:
#   receipts  $RECEIPTS (default 1000) new receipts of a small node
#   ingest    one `prose ingest` of $PAGES (default 5000) generated sources
# For each, two vaults cloned before the new history was pushed are copied
# afresh every round; one runs `prose pull`, the other plain `git pull
# --ff-only` (no arguments) with the refspecs prose writes, so git fetches
# the same refs, the ledger included, and checks out the same files. Beside
# them, `git pull --ff-only origin main` is timed too: naming the branch
# fetches it alone, without the ledger (about half the commits of the
# receipts history), the baseline this script used before 2026-12-02.
# With BASE=DIR (a checkout of prose, e.g. a git worktree of main) that
# tree's prose is built and its pull timed in the same rounds, on its own
# copy, so a change is measured against its base in one run. The order of
# the pulls rotates every round. $ROUNDS rounds (default 7); the median
# wall time of each and the ratios to git pull are printed.
# The checks every pull is tested with (fsck, receipts verify, git fsck)
# run once after the last round, outside the timing.
#
#   scripts/bench-pull.sh            RECEIPTS=1000 PAGES=5000 ROUNDS=7
#   PAGES=0 scripts/bench-pull.sh    the receipts only
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
daemon=
trap '[ -n "$daemon" ] && kill "$daemon" 2>/dev/null; wait 2>/dev/null; rm -rf "$work" 2>/dev/null || true' EXIT
go build -o "$work/prose" ./cmd/prose
base=${BASE:-}
[ -z "$base" ] || (cd "$base" && go build -o "$work/prose-base" ./cmd/prose)
go build -o "$work/wikicorpus" ./internal/cmd/wikicorpus
P="$work/prose"
export PROSE_NOW=2026-01-31 GIT_TERMINAL_PROMPT=0
rounds=${ROUNDS:-7}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
git daemon --reuseaddr --export-all --enable=receive-pack --listen=127.0.0.1 --port="$port" --base-path="$work" "$work" 2>/dev/null &
daemon=$!
for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.05; done
url=git://127.0.0.1:$port

now_ms() { date +%s%N | awk '{printf "%.1f", $1/1e6}'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# bench NAME: the remote repo NAME.git holds the base; $work/NAME-a is the
# writer; make_history runs in it; then both pulls are timed.
bench() {
  local name=$1 make=$2
  git init -q --bare "$work/$name.git"
  git -C "$work/$name.git" config daemon.receivepack true
  "$P" init "$work/$name-a" >/dev/null
  mkdir -p "$work/$name-src" && echo 0 >"$work/$name-src/n.txt"
  "$P" --vault "$work/$name-a" publish seed "$work/$name-src" >/dev/null
  "$P" --vault "$work/$name-a" remote add origin "$url/$name.git" >/dev/null
  "$P" --vault "$work/$name-a" push >/dev/null
  "$P" clone "$url/$name.git" "$work/$name-x0" >/dev/null
  git clone -q -b main "$url/$name.git" "$work/$name-y0"
  git -C "$work/$name-y0" config --add remote.origin.fetch '+refs/prose/*:refs/remotes/origin/prose/*'
  $make "$work/$name-a"
  "$P" --vault "$work/$name-a" push >/dev/null
  local pt=() gt=() ot=() bt=()
  local kinds="prose git gitbranch"
  [ -z "$base" ] || kinds="prose base git gitbranch"
  for r in $(seq "$rounds"); do
    rm -rf "$work/$name-x" "$work/$name-y" "$work/$name-z" "$work/$name-w"
    cp -a "$work/$name-x0" "$work/$name-x"
    cp -a "$work/$name-y0" "$work/$name-y"
    cp -a "$work/$name-y0" "$work/$name-w"
    [ -z "$base" ] || cp -a "$work/$name-x0" "$work/$name-z"
    sync
    # rotate which goes first, so none always has the warmer cache
    local order=() k n
    read -r -a order <<<"$kinds"
    n=${#order[@]}
    for i in $(seq 0 $((n - 1))); do
      k=${order[$(((i + r) % n))]}
      t0=$(now_ms)
      case $k in
        prose) "$P" --vault "$work/$name-x" pull >/dev/null ;;
        base) "$work/prose-base" --vault "$work/$name-z" pull >/dev/null ;;
        git) git -C "$work/$name-y" pull -q --ff-only 2>/dev/null ;;
        gitbranch) git -C "$work/$name-w" pull -q --ff-only origin main 2>/dev/null ;;
      esac
      t1=$(now_ms)
      case $k in
        prose) pt+=("$(echo "$t1 - $t0" | bc)") ;;
        base) bt+=("$(echo "$t1 - $t0" | bc)") ;;
        git) gt+=("$(echo "$t1 - $t0" | bc)") ;;
        gitbranch) ot+=("$(echo "$t1 - $t0" | bc)") ;;
      esac
    done
  done
  "$P" --vault "$work/$name-x" fsck >/dev/null
  "$P" --vault "$work/$name-x" receipts verify >/dev/null
  git -C "$work/$name-x" fsck --strict --no-progress
  [ "$(git -C "$work/$name-x" rev-parse HEAD refs/prose/ledger)" = "$(git -C "$work/$name-a" rev-parse HEAD refs/prose/ledger)" ]
  [ "$(git -C "$work/$name-y" rev-parse HEAD refs/remotes/origin/prose/ledger)" = "$(git -C "$work/$name-a" rev-parse HEAD refs/prose/ledger)" ]
  local pm gm om bm=
  pm=$(printf '%s\n' "${pt[@]}" | median)
  gm=$(printf '%s\n' "${gt[@]}" | median)
  om=$(printf '%s\n' "${ot[@]}" | median)
  if [ -n "$base" ]; then
    bm=$(printf '%s\n' "${bt[@]}" | median)
    printf '| %s | %s (%.2f×) | %s (%.2f×) | %s | %s (prose %.2f×) |\n' "$3" "$pm" "$(echo "$pm / $gm" | bc -l)" "$bm" "$(echo "$bm / $gm" | bc -l)" "$gm" "$om" "$(echo "$pm / $om" | bc -l)"
  else
    printf '| %s | %s | %s | %.2f× | %s | %.2f× |\n' "$3" "$pm" "$gm" "$(echo "$pm / $gm" | bc -l)" "$om" "$(echo "$pm / $om" | bc -l)"
  fi
}

receipts() {
  local v=$1 src="$work/receipts-src"
  for i in $(seq "${RECEIPTS:-1000}"); do
    echo "$i" >"$src/n.txt"
    "$P" --vault "$v" publish seed "$src" >/dev/null
  done
}
ingest() {
  "$work/wikicorpus" -n "${PAGES:-5000}" -size 1000 -out "$work/corpus"
  "$P" --vault "$1" ingest "$work/corpus" >/dev/null
}

if [ -n "$base" ]; then
  printf '| history pulled | prose pull ms (median of %s; ratio to git pull) | base prose pull ms | git pull ms (same refs) | git pull origin main ms (branch only) |\n|---|---|---|---|---|\n' "$rounds"
else
  printf '| history pulled | prose pull ms (median of %s) | git pull ms (same refs) | ratio | git pull origin main ms (branch only) | ratio |\n|---|---|---|---|---|---|\n' "$rounds"
fi
bench receipts receipts "${RECEIPTS:-1000} receipts"
[ "${PAGES:-5000}" = 0 ] || bench ingest ingest "ingest of ${PAGES:-5000} sources"
