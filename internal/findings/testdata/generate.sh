#!/usr/bin/env bash
# Regenerates base/, head/ and head-flags/: the cloud assemblies app.js writes with the REAL
# aws-cdk-lib that the end-to-end tests use (scripts/test-cdk.sh installs it once into a cache).
# head-flags/ is the head with the app's annotations in the report too
# (@aws-cdk/core:annotationsInValidationReport) and the legacy policy-validation-report.json
# beside it (@aws-cdk/core:validationReportJson). Run from anywhere:
#   internal/findings/testdata/generate.sh
# Stack traces are off so the assemblies hold no machine paths. The base is synthesized without
# template validation, as cdkbot synthesizes a base.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
modules=$("$root/scripts/test-cdk.sh")
for side in base head head-flags; do
  out="$here/$side"
  context='"aws:cdk:disable-stack-trace":true,"aws:cdk:disable-creation-stack-traces":true'
  [[ $side == head-flags ]] &&
    context+=',"@aws-cdk/core:annotationsInValidationReport":true,"@aws-cdk/core:validationReportJson":true'
  # As cdkbot synthesizes a base: without aws-cdk-lib's template validation (internal/synth).
  validation=true
  [[ $side == base ]] && validation=false
  rm -rf "$out"
  (cd "$here" && CDKBOT_SIDE=${side%-flags} NODE_PATH="$modules" CDK_OUTDIR="$out" CDK_VALIDATION=$validation CDK_DISABLE_STACK_TRACE=1 \
    CDK_CONTEXT_JSON="{$context}" node app.js >"$here/$side.log" 2>&1) || {
    cat "$here/$side.log" >&2; exit 1; }
  rm -f "$here/$side.log" # it names this machine's paths
done
ls -R "$here/base" "$here/head" "$here/head-flags"
