#!/usr/bin/env bash
# What a release would do, short of publishing: `goreleaser check` on .goreleaser.yaml, then a
# snapshot build of one platform per OS family (linux/amd64, this machine's, whose binary is run;
# darwin/arm64; windows/arm64) with archives and checksums.txt, so a broken release config, a
# target that does not link or an archive without LICENSE and NOTICE fails CI. The other three
# platforms build from the same code (.ci/run vets every OS); the release builds all six, and the
# image, signatures and SBOMs need docker, cosign and syft and are left to the release workflow.
# .ci/run vets with the flags GoReleaser builds with (-trimpath, no cgo) just before this, so
# these builds reuse what vet compiled and mostly link.
#
# The check is skipped when the same inputs (release config, these scripts, go.mod/go.sum, the
# Go version, the code) passed it before on this machine: a stamp in the cache records each key
# that passed. RELEASE_CHECK=always runs it anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
stamps=${XDG_CACHE_HOME:-$HOME/.cache}/cdkbot/release-check
key=$({ go version; git ls-files -s .goreleaser.yaml scripts/goreleaser.sh scripts/release-check.sh go.mod go.sum \
  LICENSE NOTICE CHANGELOG.md README.md cmd internal ':!*_test.go' ':!**/testdata/**'; git diff HEAD -- cmd internal \
  .goreleaser.yaml scripts LICENSE NOTICE; } | sha256sum | cut -c1-32)
if [ "${RELEASE_CHECK:-}" != always ] && [ -f "$stamps/$key" ]; then
  echo "release check: these release inputs passed it before on this machine ($key); skipped (RELEASE_CHECK=always runs it)"
  exit 0
fi
start=$(date +%s)
goreleaser=$(bash scripts/goreleaser.sh)
# GoReleaser reads the commit only when the repository has a remote (a clone does; a fresh
# `git init` does not): lend it one for this run, without touching .git/config.
if ! git remote get-url origin >/dev/null 2>&1; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/cdkbot/cdkbot.git
fi
"$goreleaser" check
dist=$(mktemp -d)
trap 'rm -rf "$dist"' EXIT
built=$(date +%s)
# goreleaser writes to dist/ of the project; keep the checkout clean by pointing it elsewhere,
# and leave out the second architecture of each OS but this machine's.
host=$(go env GOOS)_$(go env GOARCH)
keep=" $host darwin_arm64 windows_arm64 "
ignore=""
for p in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64 windows_arm64; do
  [[ "$keep" == *" $p "* ]] || ignore+="      - { goos: ${p%_*}, goarch: ${p#*_} }\n"
done
sed -e "s|^project_name: cdkbot\$|project_name: cdkbot\ndist: $dist/dist|" \
  -e "s|^    goarch: \[amd64, arm64\]\$|    goarch: [amd64, arm64]\n    ignore:\n$ignore|" .goreleaser.yaml >"$dist/goreleaser.yaml"
grep -q '^    ignore:' "$dist/goreleaser.yaml" || { echo "release-check.sh: no goarch line to narrow in .goreleaser.yaml"; exit 1; }
"$goreleaser" release --config "$dist/goreleaser.yaml" --snapshot --clean --skip=publish,sign,sbom,docker,validate \
  >"$dist/log.txt" 2>&1 || { cat "$dist/log.txt"; exit 1; }
echo "snapshot build: $(($(date +%s) - built)) s (goreleaser ready after $((built - start)) s)"
cd "$dist/dist"
archives=0
for p in $(tr ' ' '\n' <<<"$keep" | sort -u); do
  ext=tar.gz
  [ "${p%_*}" = windows ] && ext=zip
  a=$(ls cdkbot_*_"$p.$ext" 2>/dev/null) || { echo "no archive for $p"; exit 1; }
  if [ "$ext" = zip ]; then list=$(unzip -Z1 "$a"); else list=$(tar -tzf "$a"); fi
  for f in LICENSE NOTICE CHANGELOG.md README.md; do
    grep -qx "$f" <<<"$list" || { echo "$a does not hold $f"; exit 1; }
  done
  archives=$((archives + 1))
done
sha256sum --check --quiet checksums.txt
[ "$(grep -c 'cdkbot_' checksums.txt)" = "$archives" ] || { echo "checksums.txt does not list $archives archives"; cat checksums.txt; exit 1; }
mkdir x && tar -xzf cdkbot_*_"$host".tar.gz -C x
./x/cdkbot version | tee version.txt
grep -q "SNAPSHOT" version.txt && grep -q "commit $(git -C "$OLDPWD" rev-parse --short=12 HEAD)" version.txt ||
  { echo "the binary does not report the snapshot's version and commit"; exit 1; }
mkdir -p "$stamps" && touch "$stamps/$key"
echo "release check: config valid, $archives archives (one per OS) with LICENSE and NOTICE, checksums.txt verified"
