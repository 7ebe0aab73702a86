#!/usr/bin/env bash
# Synthesizes the demo's two assemblies (before/, after/) from the shop app of the diff corpus
# (internal/cfndiff/testdata/reference/apps/shop.js) with the real aws-cdk-lib 2.276.0 and this
# directory's cdk.context.json, as a team that committed its context would: the assemblies are
# complete (no unresolved lookups). Then refresh the goldens: go test ./internal/... -update
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
modules=$(bash "$root/scripts/test-cdk.sh")
context=$(node -e 'process.stdout.write(JSON.stringify(require(process.argv[1])))' "$here/cdk.context.json")
for variant in before after; do
  rm -rf "$here/$variant"
  SHOP_VARIANT=$variant NODE_PATH="$modules" CDK_OUTDIR="$here/$variant" CDK_DISABLE_STACK_TRACE=1 CDK_CONTEXT_JSON="$context" \
    node "$root/internal/cfndiff/testdata/reference/apps/shop.js"
done
