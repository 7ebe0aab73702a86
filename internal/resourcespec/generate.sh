#!/usr/bin/env bash
# Vendors the per-property update behaviour of every CloudFormation resource type from the
# @aws-cdk/aws-service-spec npm package (the database @aws-cdk/cloudformation-diff itself uses),
# as the compact table spec.tsv that resourcespec embeds (uncompressed: it is indexed in place, so a
# process that looks up a few types parses only those).
#
# Usage: internal/resourcespec/generate.sh [VERSION]   (default: 0.1.216, the reference's version)
# Line format (tab-separated, sorted by type):
#   TYPE  FLAGS  SCRUTINY  PROP=BEHAVIOUR[/SCRUTINY],...
# FLAGS: "s" when the type is stateful, "-" otherwise. SCRUTINY: the security scrutiny class of the
# resource or property (IdentityPolicyResource, InlineResourcePolicy, IngressRules, ...), "-" if none.
# BEHAVIOUR: u (update in place), r (replacement), m (may replace, "conditional").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-0.1.216}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --loglevel=error "@aws-cdk/aws-service-spec@$version" >/dev/null && tar xzf ./*.tgz)
node - "$tmp/package/db.json.gz" "$here/spec.tsv" "$version" <<'JS'
const fs = require('fs');
const zlib = require('zlib');
const [src, dst, version] = process.argv.slice(2);
const db = JSON.parse(zlib.gunzipSync(fs.readFileSync(src)));
const code = { yes: 'r', maybe: 'm' };
const lines = [`# @aws-cdk/aws-service-spec@${version} db.json.gz: resource type, flags, scrutiny, property update behaviour`];
const resources = db.schema.resource.entities.slice().sort((a, b) => a.cloudFormationType < b.cloudFormationType ? -1 : 1);
for (const r of resources) {
  const props = Object.keys(r.properties).sort().map((p) => {
    const spec = r.properties[p];
    const scrutiny = spec.scrutinizable && spec.scrutinizable !== 'None' ? `/${spec.scrutinizable}` : '';
    return `${p}=${code[spec.causesReplacement] || 'u'}${scrutiny}`;
  });
  const scrutiny = r.scrutinizable && r.scrutinizable !== 'None' ? r.scrutinizable : '-';
  lines.push([r.cloudFormationType, r.isStateful ? 's' : '-', scrutiny, props.join(',')].join('\t'));
}
fs.writeFileSync(dst, lines.join('\n') + '\n');
console.log(`wrote ${resources.length} resource types from @aws-cdk/aws-service-spec@${version}`);
JS
