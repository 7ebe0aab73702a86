#!/usr/bin/env bash
# Builds cdkbot's own part of the diff reference corpus and records the reference's verdicts:
#   cdkbot/real-*       real templates synthesized by aws-cdk-lib from apps/*.js, before/after
#   cdkbot/generated-*  seeded random edits of real templates (generate.js)
#   cdkbot/shortfall-*  handwritten pairs for the reference's measured weaknesses (committed as is)
#   cdkbot/case-*       handwritten pairs for defects cdkbot had (committed as is)
# then runs the pinned @aws-cdk/cloudformation-diff on every pair (record.js) and writes
# expected.json beside it. peer/ and peer-changeset/ come from ../shared/diff-reference-cases.
#
# Usage: internal/cfndiff/testdata/reference/record.sh
# Then: go test ./internal/cfndiff -run TestReferenceCorpus -update, and give every new
# deviation in deviations.json its reason.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && echo '{"private":true}' >package.json &&
  npm install --no-audit --no-fund --loglevel=error \
    @aws-cdk/cloudformation-diff@2.187.5 @aws-cdk/aws-service-spec@0.1.216 aws-cdk-lib@2.276.0 constructs@10 >/dev/null)
export NODE_PATH="$tmp/node_modules"

rm -rf "$here"/cdkbot/real-* "$here"/cdkbot/generated-*
mkdir -p "$here/cdkbot"
for app in "$here"/apps/*.js; do
  name=$(basename "$app" .js)
  for variant in before after; do
    SHOP_VARIANT=$variant CDK_OUTDIR="$tmp/out-$name-$variant" CDK_DISABLE_STACK_TRACE=1 node "$app"
  done
  for tpl in "$tmp/out-$name-after"/*.template.json; do
    stack=$(basename "$tpl" .template.json)
    dir="$here/cdkbot/real-$name-$stack"
    mkdir -p "$dir"
    cp "$tmp/out-$name-before/$stack.template.json" "$dir/old.json"
    cp "$tpl" "$dir/new.json"
    echo "synthesized by aws-cdk-lib 2.276.0 from apps/$name.js, SHOP_VARIANT=before vs after, stack $stack" >"$dir/source.txt"
  done
  # (cdkbot demo's embedded example is the shop app too, synthesized with its committed context
  # by internal/cli/demo/generate.sh.)
done
node "$here/generate.js" "$here/cdkbot" 40 "$tmp"/out-*-before/*.template.json \
  "$here"/../../../../compat-fixtures/aws-cdk-lib@2.276.0/*/*.template.json
node "$here/record.js" "$here/cdkbot"
echo "recorded $(ls -d "$here"/cdkbot/*/ | wc -l) pairs"
