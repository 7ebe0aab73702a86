#!/usr/bin/env bash
# What a release would do, short of publishing: `goreleaser check` on .goreleaser.yaml, then a
# snapshot build of every binary and archive (linux, darwin, windows × amd64, arm64) with
# checksums.txt, so a broken release config or a target that does not compile fails CI. The
# image, signatures and SBOMs need docker, cosign and syft and are left to the release workflow.
# Then the archives are checked: all six there, each matching checksums.txt, and this machine's
# binary reports the snapshot's version and commit (the ldflags took).
set -euo pipefail
cd "$(dirname "$0")/.."
goreleaser=$(bash scripts/goreleaser.sh)
# GoReleaser reads the commit only when the repository has a remote (a clone does; a fresh
# `git init` does not): lend it one for this run, without touching .git/config.
if ! git remote get-url origin >/dev/null 2>&1; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/cdkbot/cdkbot.git
fi
"$goreleaser" check
dist=$(mktemp -d)
trap 'rm -rf "$dist"' EXIT
start=$(date +%s)
# goreleaser writes to dist/ of the project; keep the checkout clean by pointing it elsewhere.
sed "s|^project_name: cdkbot\$|project_name: cdkbot\ndist: $dist/dist|" .goreleaser.yaml >"$dist/goreleaser.yaml"
"$goreleaser" release --config "$dist/goreleaser.yaml" --snapshot --clean --skip=publish,sign,sbom,docker,validate >"$dist/log.txt" 2>&1 ||
  { cat "$dist/log.txt"; exit 1; }
echo "snapshot build: $(($(date +%s) - start)) s"
cd "$dist/dist"
for os in linux darwin windows; do
  for arch in amd64 arm64; do
    ext=tar.gz
    [ "$os" = windows ] && ext=zip
    ls cdkbot_*_"${os}_${arch}.$ext" >/dev/null || { echo "no archive for $os/$arch"; exit 1; }
  done
done
sha256sum --check --quiet checksums.txt
[ "$(grep -c 'cdkbot_' checksums.txt)" = 6 ] || { echo "checksums.txt does not list six archives"; cat checksums.txt; exit 1; }
host=$(go env GOOS)_$(go env GOARCH)
mkdir x && tar -xzf cdkbot_*_"$host".tar.gz -C x
./x/cdkbot version | tee version.txt
grep -q "SNAPSHOT" version.txt && grep -q "commit $(git -C "$OLDPWD" rev-parse --short=12 HEAD)" version.txt ||
  { echo "the binary does not report the snapshot's version and commit"; exit 1; }
echo "release check: config valid, 6 archives and checksums.txt built and verified"
