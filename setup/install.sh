#!/usr/bin/env bash
# Installs a cdkbot release binary for this runner and puts it on PATH; run by setup/action.yml.
# checksums.txt's keyless signature (checksums.txt.sigstore.json, made by the release workflow on
# main) is verified with cosign when cosign is on PATH (sigstore/cosign-installer), and the log
# says plainly when it is not (CDKBOT_REQUIRE_SIGNATURE=true then stops the job). The archive is
# verified against checksums.txt before anything is extracted: a mismatch stops the job. Verified archives and their binaries are kept in the tool cache, by
# version and platform, and verified again on every use: checksums.txt is fetched from the
# release each time, the cached archive must match it and the cached binary must be the one in
# that archive, else the binary is installed again.
#
# Environment: CDKBOT_VERSION (1.2.3, v1.2.3 or latest), CDKBOT_GITHUB_TOKEN (optional),
# CDKBOT_REQUIRE_SIGNATURE (true: no cosign, no install), CDKBOT_COSIGN (default cosign), RUNNER_OS,
# RUNNER_ARCH, RUNNER_TOOL_CACHE (or RUNNER_TEMP), GITHUB_PATH, GITHUB_OUTPUT as the runner sets
# them. CDKBOT_RELEASES_URL and CDKBOT_API_URL replace github.com (tests, GitHub Enterprise mirrors).
set -euo pipefail

releases=${CDKBOT_RELEASES_URL:-https://github.com/cdkbot/cdkbot/releases/download}
api=${CDKBOT_API_URL:-https://api.github.com/repos/cdkbot/cdkbot}
fail() { echo "::error title=cdkbot setup::$*" >&2; exit 1; }

case "${RUNNER_OS:-$(uname -s)}" in
  Linux) os=linux ;;
  macOS | Darwin) os=darwin ;;
  Windows | MINGW* | MSYS*) os=windows ;;
  *) fail "unsupported runner OS ${RUNNER_OS:-$(uname -s)}: cdkbot is released for Linux, macOS and Windows" ;;
esac
case "${RUNNER_ARCH:-$(uname -m)}" in
  X64 | x86_64 | amd64) arch=amd64 ;;
  ARM64 | arm64 | aarch64) arch=arm64 ;;
  *) fail "unsupported runner architecture ${RUNNER_ARCH:-$(uname -m)}: cdkbot is released for x64 and ARM64" ;;
esac

curl_() {
  local auth=()
  [ -n "${CDKBOT_GITHUB_TOKEN:-}" ] && [[ "$1" == "$api"* ]] && auth=(-H "Authorization: Bearer $CDKBOT_GITHUB_TOKEN")
  curl -fsSL --retry 3 --retry-delay 2 --connect-timeout 20 "${auth[@]}" "$@"
}

version=${CDKBOT_VERSION:-latest}
if [ "$version" = latest ]; then
  tag=$(curl_ "$api/releases/latest" | sed -n 's/.*"tag_name": *"\([^"]*\)".*/\1/p' | head -n 1)
  [ -n "$tag" ] || fail "could not find the latest release at $api/releases/latest; set the version input"
  version=$tag
fi
version=${version#v}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] || fail "version \"$version\" is not a release version (1.2.3)"

ext=tar.gz
exe=cdkbot
if [ "$os" = windows ]; then ext=zip exe=cdkbot.exe; fi
archive="cdkbot_${version}_${os}_${arch}.${ext}"
dir="${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/cdkbot/$version/$arch"

sha256() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | awk '{print $1}'
  else
    shasum -a 256 "$1" | awk '{print $1}'
  fi
}

# extract ARCHIVE DIR: unpacks the archive and checks it holds the binary.
extract() {
  mkdir -p "$2"
  if [ "$ext" = zip ]; then
    if command -v unzip >/dev/null; then
      unzip -q -o "$1" -d "$2"
    else
      pwsh -NoProfile -Command "Expand-Archive -Force -LiteralPath '$1' -DestinationPath '$2'"
    fi
  else
    tar -xzf "$1" -C "$2"
  fi
  [ -f "$2/$exe" ] || fail "$archive holds no $exe"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The checksum comes from the release on every run, never from the tool cache: whatever can
# write the cache (a job before this one, on a self-hosted runner) could rewrite a checksum kept
# there too. The cache keeps the verified archive, and the binary is used only when it is the
# one in that archive.
curl_ -o "$work/checksums.txt" "$releases/v$version/checksums.txt" || fail "no checksums.txt for release v$version at $releases/v$version/"
# Who signs releases: the release workflow of cdkbot/cdkbot, run on main, through GitHub's OIDC.
signer=${CDKBOT_SIGNER:-https://github.com/cdkbot/cdkbot/.github/workflows/release.yml@refs/heads/main}
cosign=${CDKBOT_COSIGN:-cosign} # tests name a stand-in, or one that is not there
if command -v "$cosign" >/dev/null; then
  curl_ -o "$work/checksums.txt.sigstore.json" "$releases/v$version/checksums.txt.sigstore.json" ||
    fail "release v$version has no checksums.txt.sigstore.json: its checksums.txt cannot be verified, refusing to install"
  "$cosign" verify-blob --bundle "$work/checksums.txt.sigstore.json" --certificate-identity "$signer" \
    --certificate-oidc-issuer https://token.actions.githubusercontent.com "$work/checksums.txt" >"$work/cosign.log" 2>&1 ||
    { cat "$work/cosign.log" >&2; fail "checksums.txt of v$version is not signed by $signer: refusing to install"; }
  echo "checksums.txt of v$version: signature verified (signed by $signer)"
elif [ "${CDKBOT_REQUIRE_SIGNATURE:-false}" = true ]; then
  fail "cosign is not on PATH, so checksums.txt's signature cannot be verified and require-signature is true:" \
    "add sigstore/cosign-installer before this step"
else
  echo "::notice title=cdkbot setup::checksums.txt's signature was NOT verified: cosign is not on PATH." \
    "The archive is checked against checksums.txt as downloaded from the release over HTTPS; to verify who" \
    "made it too, add sigstore/cosign-installer before this step (require-signature: true makes it required)."
fi
want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$work/checksums.txt")
[ -n "$want" ] || fail "checksums.txt of v$version does not list $archive"

cached=false
if [ -f "$dir/$archive" ] && [ "$(sha256 "$dir/$archive")" = "$want" ]; then
  extract "$dir/$archive" "$work/x"
  if [ -f "$dir/$exe" ] && [ "$(sha256 "$dir/$exe")" = "$(sha256 "$work/x/$exe")" ]; then
    cached=true
    echo "cdkbot $version ($os/$arch) from the tool cache, verified against checksums.txt"
  else
    echo "::warning title=cdkbot setup::the cached cdkbot binary in $dir is not the one in its verified archive" \
      "(it was changed after it was installed): installing it again from the archive"
  fi
elif [ -f "$dir/$archive" ]; then
  echo "::warning title=cdkbot setup::the cached $archive in $dir does not match checksums.txt of v$version" \
    "(it was changed after it was installed): downloading it again"
  rm -f "$dir/$archive"
fi
if [ "$cached" = false ]; then
  if [ ! -f "$work/x/$exe" ]; then
    echo "downloading cdkbot $version ($os/$arch) from $releases/v$version/"
    curl_ -o "$work/$archive" "$releases/v$version/$archive" || fail "no $archive in release v$version"
    got=$(sha256 "$work/$archive")
    [ "$got" = "$want" ] || fail "$archive does not match checksums.txt (sha256 $got, expected $want): refusing to install it"
    extract "$work/$archive" "$work/x"
  fi
  mkdir -p "$dir"
  rm -f "$dir/$exe" "$dir/.verified"
  if [ -f "$work/$archive" ]; then cp "$work/$archive" "$dir/$archive"; fi
  cp "$work/x/$exe" "$dir/$exe"
  chmod +x "$dir/$exe"
  echo "$want  $archive" >"$dir/.verified" # what was verified, for people; never read back
fi

"$dir/$exe" version | head -n 1
if [ -n "${GITHUB_PATH:-}" ]; then echo "$dir" >>"$GITHUB_PATH"; fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "version=$version" >>"$GITHUB_OUTPUT"
  echo "path=$dir" >>"$GITHUB_OUTPUT"
fi
