#!/usr/bin/env bash
# Installs GoReleaser, pinned (the release workflow uses the same version), from the Go module
# proxy into a cache directory, once, and prints the binary's path. Run by scripts/release-check.sh.
set -euo pipefail
version=v2.15.1
bin=${XDG_CACHE_HOME:-$HOME/.cache}/cdkbot/tools/goreleaser-$version
if [ ! -x "$bin/goreleaser" ]; then
  echo "installing goreleaser $version (once; a few minutes on a cold cache) …" >&2
  mkdir -p "$bin"
  (cd "$bin" && GOFLAGS= GOBIN="$bin" go install "github.com/goreleaser/goreleaser/v2@$version" >&2)
fi
echo "$bin/goreleaser"
