#!/usr/bin/env bash
# Vendors the cloud assembly JSON Schema of each @aws-cdk/cloud-assembly-schema version listed in
# versions.txt into <version>/ (cloud-assembly.schema.json and the package's schema version
# file), for the schema-history test of internal/compat.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -vE '^\s*(#|$)' "$here/versions.txt" | while read -r v; do
  rm -rf "$tmp/package" "$tmp"/*.tgz
  (cd "$tmp" && npm pack --loglevel=error "@aws-cdk/cloud-assembly-schema@$v" >/dev/null && tar xzf ./*.tgz)
  mkdir -p "$here/$v"
  cp "$tmp/package/schema/cloud-assembly.schema.json" "$here/$v/"
  for f in version.json cloud-assembly.version.json; do
    [ -f "$tmp/package/schema/$f" ] && cp "$tmp/package/schema/$f" "$here/$v/"
  done
  echo "$v"
done
