#!/usr/bin/env bash
# Vendors the cloud assembly JSON Schemas that cdkbot validates against, from the
# @aws-cdk/cloud-assembly-schema npm package (the schema the CDK CLI itself uses).
#
# Usage: internal/assembly/schema/update.sh [VERSION]   (default: the newest published version)
# Writes cloud-assembly.schema.json, assets.schema.json, version.json and SOURCE beside this script,
# and the compact forms cdkbot embeds (*.compact.json).
# The major of VERSION becomes the newest manifest schema major cdkbot reads.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-$(npm view @aws-cdk/cloud-assembly-schema version)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --loglevel=error "@aws-cdk/cloud-assembly-schema@$version" >/dev/null && tar xzf ./*.tgz)
for f in cloud-assembly.schema.json assets.schema.json version.json; do
  cp "$tmp/package/schema/$f" "$here/$f"
done
printf '@aws-cdk/cloud-assembly-schema@%s\n' "$version" >"$here/SOURCE"
# The embedded forms, without annotations (see schema.go).
(cd "$here/.." && go test . -run TestCompactSchemasAreCurrent -update >/dev/null)
echo "vendored @aws-cdk/cloud-assembly-schema@$version"
