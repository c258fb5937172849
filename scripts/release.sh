#!/usr/bin/env bash
# Release build: stripped, reproducible prose binaries for linux and darwin
# on amd64 and arm64, in dist/ (prose-VERSION-OS-ARCH) with a SHA256SUMS
# file.
#
# Reproducible: no cgo, -trimpath (no machine paths), -buildvcs=false (no
# VCS stamp), -buildid= and -s -w (no build id, symbol table or DWARF),
# GOAMD64/GOARM64 fixed, and GOFLAGS from the environment ignored; the
# version is the only input besides the source and the Go version.
#
# --verify builds everything twice, each time with a fresh, empty build
# cache (GOCACHE), and fails unless the two SHA256SUMS are identical; the
# first build then becomes dist/. Cold builds take minutes (each target
# builds the standard library and every dependency from nothing);
# RELEASE_TARGETS="linux/amd64" narrows a check to some targets.
#
# Usage: scripts/release.sh [--verify] [VERSION]
#   VERSION defaults to `git describe --tags --always --dirty`.
set -euo pipefail
cd "$(dirname "$0")/.."

verify=false
if [ "${1:-}" = --verify ]; then
  verify=true
  shift
fi
if [ $# -gt 1 ] || [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
version="${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
case "$version" in
  *[!A-Za-z0-9._+-]*|'') echo "release.sh: version \"$version\" must be letters, digits and . _ + -" >&2; exit 2 ;;
esac
targets="${RELEASE_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"

# build DIR GOCACHE: every target into DIR, then DIR/SHA256SUMS.
build() {
  local out="$1" cache="$2" target os arch
  mkdir -p "$out"
  for target in $targets; do
    os="${target%/*}" arch="${target#*/}"
    env GOCACHE="$cache" GOFLAGS= CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" GOAMD64=v1 GOARM64=v8.0 \
      go build -trimpath -buildvcs=false -tags urfave_cli_no_docs \
      -ldflags "-s -w -buildid= -X main.version=$version" \
      -o "$out/prose-$version-$os-$arch" ./cmd/prose
  done
  (cd "$out" && sha256sum prose-"$version"-* >SHA256SUMS)
}

work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
echo "# prose $version release build, $(go version | cut -d' ' -f3)"
if $verify; then
  echo "# build 1 (fresh GOCACHE)"
  build "$work/a" "$work/cache-a"
  echo "# build 2 (fresh GOCACHE)"
  build "$work/b" "$work/cache-b"
  if ! cmp -s "$work/a/SHA256SUMS" "$work/b/SHA256SUMS"; then
    echo "release.sh: the two builds differ:" >&2
    diff "$work/a/SHA256SUMS" "$work/b/SHA256SUMS" >&2 || true
    exit 1
  fi
  echo "# the two builds are identical"
  built="$work/a"
else
  build "$work/a" "$(go env GOCACHE)"
  built="$work/a"
fi
rm -rf dist
mkdir -p dist
cp "$built"/prose-"$version"-* "$built/SHA256SUMS" dist/
ls -l dist
cat dist/SHA256SUMS
