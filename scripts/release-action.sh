#!/usr/bin/env bash
# Points action.yml at a release's prebuilt image: `image: Dockerfile` becomes
# `image: docker://ghcr.io/cdkbot/cdkbot:vVERSION`, so the release commit's action starts by
# pulling the image instead of compiling cdkbot. Run by .github/workflows/release.yml on the
# commit it tags; main keeps building the Dockerfile (the dogfood workflow tests it).
# Usage: scripts/release-action.sh 1.2.3 [action.yml]
set -euo pipefail
version=${1:?usage: release-action.sh VERSION [action.yml]}
file=${2:-"$(dirname "$0")/../action.yml"}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || { echo "version $version is not 1.2.3" >&2; exit 2; }
n=$(grep -c '^  image: Dockerfile$' "$file" || true)
[ "$n" = 1 ] || { echo "$file: expected one 'image: Dockerfile' line under runs:, found $n" >&2; exit 1; }
sed -i.bak "s|^  image: Dockerfile\$|  image: docker://ghcr.io/cdkbot/cdkbot:v$version|" "$file"
rm -f "$file.bak"
