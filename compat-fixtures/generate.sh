#!/usr/bin/env bash
# Regenerates compat-fixtures/<framework>@<version>/<app>/ by installing each REAL framework version
# listed in versions.txt from npm into a temporary directory and running every app in apps/ with
# CDK_OUTDIR (no CDK CLI involved, exactly as `cdk synth` runs an app).
#
# Usage: compat-fixtures/generate.sh [FILTER]   (FILTER: only versions whose line contains it)
# Afterwards refresh the inspect goldens: go test ./compat-fixtures/... -update
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
filter=${1:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results="$here/results.txt"
: >"$results.new"

grep -vE '^\s*(#|$)' "$here/versions.txt" | while read -r pkg version; do
  [[ -z "$filter" || "$pkg $version" == *"$filter"* ]] || continue
  case "$pkg" in
    @aws-cdk/core) major=1; dir="aws-cdk-core@$version"
      deps=("@aws-cdk/core@$version" "@aws-cdk/aws-s3-assets@$version" "@aws-cdk/aws-ecr-assets@$version"
            "@aws-cdk/aws-cloudformation@$version") ;;
    aws-cdk-lib) major=2; dir="aws-cdk-lib@$version"; deps=("aws-cdk-lib@$version" "constructs@10") ;;
    *) echo "unknown framework package $pkg" >&2; exit 2 ;;
  esac
  echo "== $pkg $version"
  inst="$work/$dir"
  mkdir -p "$inst"
  (cd "$inst" && echo '{"private":true}' >package.json &&
    npm install --no-audit --no-fund --ignore-scripts --loglevel=error --legacy-peer-deps "${deps[@]}" >"$inst/npm.log" 2>&1) || {
    echo "$dir install-failed $(tail -n 3 "$inst/npm.log" | tr '\n' ' ')" >>"$results.new"; continue; }
  rm -rf "${here:?}/$dir.tmp" && mkdir -p "$here/$dir.tmp"
  for app in "$here"/apps/*.js; do
    name=$(basename "$app" .js)
    [[ "$name" == cdk ]] && continue
    out="$here/$dir.tmp/$name"
    set +e
    # No stack traces in metadata: they hold this machine's temp paths and make fixtures unreproducible.
    CDKBOT_FIXTURE_MAJOR=$major NODE_PATH="$inst/node_modules" CDK_OUTDIR="$out" \
      CDK_DISABLE_STACK_TRACE=1 CDK_CONTEXT_JSON='{"aws:cdk:disable-stack-trace":true}' \
      node "$app" >"$inst/$name.log" 2>&1
    rc=$?
    set -e
    case $rc in
      0) echo "$dir $name ok" >>"$results.new" ;;
      78) rm -rf "$out"; echo "$dir $name not-applicable $(tail -n 1 "$inst/$name.log")" >>"$results.new" ;;
      *) rm -rf "$out"; echo "$dir $name failed $(tail -n 3 "$inst/$name.log" | tr '\n' ' ')" >>"$results.new" ;;
    esac
  done
  printf '{"framework": "%s", "version": "%s", "node": "%s", "generatedBy": "compat-fixtures/generate.sh"}\n' \
    "$pkg" "$version" "$(node --version)" >"$here/$dir.tmp/fixture.json"
  rm -rf "${here:?}/$dir" && mv "$here/$dir.tmp" "$here/$dir"
done
mv "$results.new" "$results"
cat "$results"
