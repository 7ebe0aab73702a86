#!/usr/bin/env bash
# The steps of a release, run one by one by .github/workflows/release.yml, in this order, so a
# release happens whole or not at all:
#   preflight  refuse unless: VERSION is 1.2.3[-pre], the run is on main, CI passed at this commit,
#              neither the tag nor a release exists yet
#   prepare    the local tag GoReleaser builds from (never pushed as it is) and the release notes,
#              CHANGELOG.md's section for the version
#   (the workflow then runs GoReleaser: build, push the image by its version tag, sign)
#   tag        the image's digest from the registry; the image must be pullable anonymously (the
#              package public), else stop here with nothing tagged; the release commit (its
#              action.yml names the image by digest, its setup action defaults to this version,
#              scripts/release-action.sh), tagged and the tag pushed: nothing else is pushed
#   publish    a draft release with every asset, then published; a stable release (not a
#              prerelease) then moves vN, the git tag and the image tag
#   undo       after a failure once the tag is pushed and before the release is published: the
#              draft and the tag are deleted, so a rerun starts clean
# Environment: VERSION; GITHUB_REF, GITHUB_SHA, GITHUB_REPOSITORY, GITHUB_API_URL, GH_TOKEN and
# RUNNER_TEMP as the runner sets them; IMAGE (default ghcr.io/$GITHUB_REPOSITORY) and
# REGISTRY_URL (default https://HOST of IMAGE); DIST (default dist). Tools: git, curl, jq.
# scripts/release/release_test.go runs the workflow's steps with this script against a local
# registry and the project's GitHub test server.
set -euo pipefail
cd "$(dirname "$0")/.."

step=${1:?usage: release.sh preflight|prepare|tag|publish|undo}
version=${VERSION:?VERSION is not set}
tag=v$version
repo=${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}
api_url=${GITHUB_API_URL:-https://api.github.com}
token=${GH_TOKEN:-${GITHUB_TOKEN:-}}
image=${IMAGE:-ghcr.io/$repo}
registry_host=${image%%/*}
image_repo=${image#*/}
registry_url=${REGISTRY_URL:-https://$registry_host}
dist=${DIST:-dist}
state=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/cdkbot-release-$version
mkdir -p "$state"
prerelease=false
[[ "$version" == *-* ]] && prerelease=true

fail() { echo "::error title=release::$*" >&2; exit 1; }
log() { echo "release $tag: $*"; }

[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || fail "version $version is not 1.2.3 or 1.2.3-rc.1"

# api METHOD PATH [JSON]: GitHub's answer on stdout; the status in $state/status. Fails on 5xx and
# on 4xx other than 404 (callers read 404 as "not there").
api() {
  local args=(-sS -X "$1" -H "Accept: application/vnd.github+json" -H "X-GitHub-Api-Version: 2022-11-28"
    -o "$state/body" -w '%{http_code}')
  [ -n "$token" ] && args+=(-H "Authorization: Bearer $token")
  [ $# -ge 3 ] && args+=(-H "Content-Type: application/json" --data "$3")
  local url=$2
  [[ "$url" == http* ]] || url=$api_url$url
  curl "${args[@]}" "$url" >"$state/status" || fail "$1 $url: no answer"
  local code
  code=$(cat "$state/status")
  if [ "$code" -ge 400 ] && [ "$code" != 404 ]; then
    fail "$1 $url: $code $(head -c 500 "$state/body")"
  fi
  cat "$state/body"
}
status() { cat "$state/status"; }

# registry_token SCOPE [anonymous]: a bearer token for the image's repository (GHCR's token
# service, with the workflow's token unless anonymous); empty where the registry needs none.
registry_token() {
  local auth=()
  [ "${2:-}" != anonymous ] && [ -n "$token" ] && auth=(-u "x-access-token:$token")
  curl -fsS "${auth[@]}" "$registry_url/token?scope=repository:$image_repo:$1&service=$registry_host" 2>/dev/null |
    jq -r '.token // empty' 2>/dev/null || true
}

accept='application/vnd.oci.image.index.v1+json,application/vnd.docker.distribution.manifest.list.v2+json'
accept+=',application/vnd.oci.image.manifest.v1+json,application/vnd.docker.distribution.manifest.v2+json'

# manifest REF TOKEN: fetches the manifest into $state/manifest and its headers into $state/headers.
manifest() {
  local auth=()
  [ -n "$2" ] && auth=(-H "Authorization: Bearer $2")
  curl -fsS "${auth[@]}" -H "Accept: $accept" -D "$state/headers" -o "$state/manifest" \
    "$registry_url/v2/$image_repo/manifests/$1"
}
header() { tr -d '\r' <"$state/headers" | awk -v h="$1" 'tolower($1) == tolower(h) ":" { print $2 }' | tail -n 1; }

notes() {
  # CHANGELOG.md's section for the version: from its heading (## v1.2.3 or ## 1.2.3, anything
  # after) to the next ## heading.
  awk -v v="$version" '
    /^## / { if (on) exit; on = ($2 == "v" v || $2 == v) ; next }
    on { print }' CHANGELOG.md
}

case $step in
preflight)
  [ "${GITHUB_REF:-}" = refs/heads/main ] || fail "releases are made from main; this run is on ${GITHUB_REF:-no ref}"
  sha=${GITHUB_SHA:?GITHUB_SHA is not set}
  [ "$(git rev-parse HEAD)" = "$sha" ] || fail "the checkout is not $sha"
  if git ls-remote --exit-code --tags origin "refs/tags/$tag" >/dev/null; then
    fail "$tag exists; a release is never made twice (choose the next version)"
  fi
  api GET "/repos/$repo/releases/tags/$tag" >/dev/null
  [ "$(status)" = 404 ] || fail "a release for $tag exists"
  runs=$(api GET "/repos/$repo/actions/workflows/ci.yml/runs?head_sha=$sha&status=success&per_page=1")
  [ "$(jq -r '.total_count // 0' <<<"$runs")" -ge 1 ] ||
    fail "CI (ci.yml) has not passed at $sha: release a commit of main whose CI is green"
  [ -n "$(notes)" ] || fail "CHANGELOG.md has no section for $tag: retitle Unreleased '## $tag' in a commit first"
  log "preflight passed: $sha on main, CI green, $tag new"
  ;;
prepare)
  notes >"$state/notes.md"
  git -c user.name=github-actions -c user.email=41898282+github-actions[bot]@users.noreply.github.com \
    tag -f -a "$tag" -m "cdkbot $tag" HEAD
  log "tagged locally for the build; notes in $state/notes.md"
  ;;
tag)
  tok=$(registry_token pull)
  manifest "$tag" "$tok" || fail "the image $image:$tag is not in the registry: the build did not push it"
  digest=$(header docker-content-digest)
  [[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]] || fail "the registry named no digest for $image:$tag"
  echo "$digest" >"$state/digest"
  # Users pull without credentials: GHCR keeps a new package private, and GitHub's API cannot
  # change that, so a private package stops the release here, before anything is tagged.
  if ! manifest "$digest" "$(registry_token pull anonymous)"; then
    fail "$image is not public: users' pulls would fail. Once: the package's settings" \
      "(https://github.com/orgs/${repo%%/*}/packages/container/${image_repo##*/}/settings), Change visibility," \
      "Public; then run the release again (nothing was tagged or published)"
  fi
  bash scripts/release-action.sh "$version" "$image@$digest" .
  git -c user.name=github-actions -c user.email=41898282+github-actions[bot]@users.noreply.github.com \
    commit -qam "release $tag: action.yml runs $image@$digest"
  git -c user.name=github-actions -c user.email=41898282+github-actions[bot]@users.noreply.github.com \
    tag -f -a "$tag" -m "cdkbot $tag"
  git push origin "refs/tags/$tag"
  touch "$state/tagged"
  log "tagged $(git rev-parse --short=12 HEAD): action.yml runs $image@$digest"
  ;;
publish)
  [ -f "$state/tagged" ] || fail "not tagged yet: run the tag step first"
  [ -s "$state/notes.md" ] || notes >"$state/notes.md"
  body=$(jq -n --arg tag "$tag" --rawfile notes "$state/notes.md" --argjson pre "$prerelease" \
    '{tag_name: $tag, name: $tag, body: $notes, draft: true, prerelease: $pre}')
  rel=$(api POST "/repos/$repo/releases" "$body")
  id=$(jq -r .id <<<"$rel")
  echo "$id" >"$state/release-id"
  upload=$(jq -r .upload_url <<<"$rel")
  upload=${upload%%\{*}
  shopt -s nullglob
  assets=("$dist"/*.tar.gz "$dist"/*.zip "$dist"/checksums.txt "$dist"/*.sigstore.json "$dist"/*.sbom.json)
  [ ${#assets[@]} -gt 0 ] || fail "no assets in $dist"
  for f in "${assets[@]}"; do
    curl -fsS -X POST -H "Authorization: Bearer $token" -H "Content-Type: application/octet-stream" \
      --data-binary "@$f" "$upload?name=$(basename "$f")" >/dev/null || fail "upload of $(basename "$f") failed"
  done
  latest=true
  [ "$prerelease" = true ] && latest=false
  api PATCH "/repos/$repo/releases/$id" "{\"draft\": false, \"make_latest\": \"$latest\"}" >/dev/null
  touch "$state/published"
  log "published with ${#assets[@]} assets"
  if [ "$prerelease" = true ]; then
    log "a prerelease: v${version%%.*} stays where it is"
    exit 0
  fi
  major=v${version%%.*}
  git tag -f "$major" "$tag^{}"
  git push -f origin "refs/tags/$major"
  tok=$(registry_token pull,push)
  manifest "$(cat "$state/digest")" "$tok" || fail "the image $image@$(cat "$state/digest") is gone"
  auth=()
  [ -n "$tok" ] && auth=(-H "Authorization: Bearer $tok")
  curl -fsS -X PUT "${auth[@]}" -H "Content-Type: $(header content-type)" --data-binary "@$state/manifest" \
    "$registry_url/v2/$image_repo/manifests/$major" >/dev/null || fail "could not move the image tag $major"
  log "moved $major (git tag and image tag) to $tag"
  ;;
undo)
  if [ -f "$state/published" ]; then
    log "already published: nothing to undo"
    exit 0
  fi
  if [ -f "$state/release-id" ]; then
    api DELETE "/repos/$repo/releases/$(cat "$state/release-id")" >/dev/null
    log "deleted the draft release"
  fi
  if [ -f "$state/tagged" ]; then
    git push origin ":refs/tags/$tag"
    log "deleted the tag: run the release again once the failure is fixed"
  fi
  ;;
*)
  fail "unknown step $step"
  ;;
esac
