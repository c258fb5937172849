#!/usr/bin/env bash
# The main job, with no key and no network: build prose, create a fresh
# vault in demo/wiki (git-ignored), ingest the example sources in
# fixtures/sources/ (a Markdown guide, an HTML page, a JSON conversation)
# with the built-in offline engine, lint the wiki, and print where to open
# it. Running it again starts fresh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mkdir -p bin
go build -o bin/prose ./cmd/prose
prose="$root/bin/prose"
rm -rf demo/wiki
mkdir -p demo
export PROSE_VAULT="$root/demo/wiki"

step() { printf '\n$ prose %s\n' "$*"; "$prose" "$@"; }

step init demo/wiki
step ingest fixtures/sources
# The same sources again: nothing new, no model call, no commit.
step ingest fixtures/sources
# Enrich fills empty slots; the ingest left none: no commit.
step enrich --all
step wiki lint
step wiki review list
printf '\n$ git -C demo/wiki log --oneline\n'
git -C demo/wiki log --oneline
printf '\n$ git -C demo/wiki status --short\n'
git -C demo/wiki status --short
echo "(clean)"
printf '\nOpen %s/demo/wiki/published/wiki/README.html in a browser.\n' "$root"
