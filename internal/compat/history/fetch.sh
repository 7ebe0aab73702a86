#!/usr/bin/env bash
# Vendors the cloud assembly JSON Schema of each @aws-cdk/cloud-assembly-schema version listed in
# versions.txt as <package-version>.schema.json.gz, and index.tsv mapping each package version to
# the schema version it declares (the "version" of its schema version file in the CDK v1/v2 era,
# the package version itself since the package is versioned on its own). compat embeds these to
# name the schema changes between a PR's base and head; its tests classify every consecutive pair.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$here/index.tsv.new"
grep -vE '^\s*(#|$)' "$here/versions.txt" | while read -r v; do
  rm -rf "$tmp/package" "$tmp"/*.tgz
  (cd "$tmp" && npm pack --loglevel=error "@aws-cdk/cloud-assembly-schema@$v" >/dev/null && tar xzf ./*.tgz)
  gzip -9n <"$tmp/package/schema/cloud-assembly.schema.json" >"$here/$v.schema.json.gz"
  declared=$v
  for f in cloud-assembly.version.json version.json; do
    if [ -f "$tmp/package/schema/$f" ]; then
      d=$(node -e "const v=require('$tmp/package/schema/$f'); if (v.version) console.log(v.version)")
      [ -n "$d" ] && declared=$d
    fi
  done
  printf '%s\t%s\t%s.schema.json.gz\n' "$v" "$declared" "$v" >>"$here/index.tsv.new"
  echo "$v → schema $declared"
done
mv "$here/index.tsv.new" "$here/index.tsv"
