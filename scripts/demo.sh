#!/usr/bin/env bash
# The main job on the fixtures, with no key and no network: build prose,
# create a fresh vault in demo/vault (git-ignored), publish the example
# world-models, and print the log and a material diff. Running it again
# starts fresh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mkdir -p bin
go build -o bin/prose ./cmd/prose
prose="$root/bin/prose"
fx="$root/fixtures/world-models"
rm -rf demo/vault
mkdir -p demo
export PROSE_VAULT="$root/demo/vault"

step() { printf '\n$ prose %s\n' "$*"; "$prose" "$@"; }

step init demo/vault
# A node with facets and a canonicalization spec.
step publish dashboard "$fx/dashboard/v1" --spec "$fx/dashboard.spec.yaml"
# A node without facets, published twice unchanged: the second is skipped.
step publish 'claude-sessions::ingress' "$fx/sessions/v1"
step publish 'claude-sessions::ingress' "$fx/sessions/v1"
# Only immaterial churn (timestamps, request ids, key order, spacing): skipped.
step publish dashboard "$fx/dashboard/v2"
# A material change inside the open-items facet: rendered, moves open-items and @atomic only.
step publish dashboard "$fx/dashboard/v3"
step log
step diff
step diff --format markdown
step receipts verify
step fsck
printf '\n$ git -C demo/vault log --oneline --all\n'
git -C demo/vault log --oneline --all
printf '\n$ git -C demo/vault status --short\n'
git -C demo/vault status --short
echo "(clean)"
