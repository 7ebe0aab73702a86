#!/usr/bin/env bash
# Screenshots of the review comment as GitHub shows it, for the README: the demo, a review of a
# change that changes nothing, and a blocked review (the app's findings, a likely move and the
# validation-error gate). One command, from anywhere in the repository:
#
#   scripts/screenshots/screenshots.sh          # writes docs/screenshots/*.png and *.md
#
# It renders each comment cdkbot writes (go run ./cmd/cdkbot) with a GitHub-flavoured renderer
# (marked + marked-alert) in GitHub's CSS (github-markdown-css), pinned in package.json and
# installed once into a cache directory, and screenshots it with Debian's headless Chromium
# (installed with apt-get when missing). No network but the package registries.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$root/docs/screenshots"
cache=${CDKBOT_SCREENSHOTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cdkbot/screenshots}

if ! command -v "${CHROMIUM:-/usr/bin/chromium}" >/dev/null; then
  echo "installing chromium (Debian package)" >&2
  sudo=""; [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium fonts-noto-color-emoji >&2
fi

# The renderer, once per package.json: the cache is keyed by its content.
stamp=$(sha256sum "$here/package.json" | cut -c1-16)
if [[ ! -f "$cache/$stamp/node_modules/.complete" ]]; then
  rm -rf "$cache/$stamp" && mkdir -p "$cache/$stamp"
  cp "$here/package.json" "$cache/$stamp/"
  (cd "$cache/$stamp" && npm install --no-audit --no-fund --loglevel=error >&2)
  touch "$cache/$stamp/node_modules/.complete"
fi
cp "$here/shoot.mjs" "$cache/$stamp/shoot.mjs"

mkdir -p "$out"
cdkbot="$cache/cdkbot"
(cd "$root" && go build -o "$cdkbot" ./cmd/cdkbot)
# review exits 1 when a gate blocks: that is the blocked case's point, not a failure here.
review() {
  local rc=0
  (cd "$root" && "$cdkbot" "$@") || rc=$?
  [[ $rc == 0 || $rc == 1 ]] || { echo "cdkbot $* exited $rc" >&2; exit 1; }
}
# The demo, kept: its repository's head reviewed against itself is a change that changes nothing.
(cd "$root" && "$cdkbot" demo --keep) >"$out/demo.md" 2>"$cache/demo.log"
repo=$(sed -n 's/^demo repository kept at //p' "$cache/demo.log")
[[ -d "$repo" ]] || { cat "$cache/demo.log" >&2; exit 1; }
trap 'rm -rf "$repo"' EXIT
review review --repo "$repo" --base HEAD --head HEAD --format markdown >"$out/no-change.md" 2>/dev/null
review review --base-assembly internal/findings/testdata/base --head-assembly internal/findings/testdata/head \
  --fail-on incomplete,export-in-use,replace-named,destroy-stateful,security-broadening,validation-error \
  --format markdown >"$out/blocked.md"

for f in demo no-change blocked; do
  printf '%-10s %6d bytes %4d lines\n' "$f" "$(wc -c <"$out/$f.md")" "$(wc -l <"$out/$f.md")"
done
(cd "$cache/$stamp" && node shoot.mjs "$out" "demo=$out/demo.md" "no-change=$out/no-change.md" \
  "blocked=$out/blocked.md:open")
