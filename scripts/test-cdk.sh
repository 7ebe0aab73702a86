#!/usr/bin/env bash
# Installs the real CDK framework the end-to-end tests synthesize with (aws-cdk-lib 2.276.0 and
# constructs 10) into a cache directory, once, and prints its node_modules path. Run by the
# tests themselves (internal/cli/e2e_test.go), so a fresh machine or CI needs nothing else.
set -euo pipefail
cache=${CDKBOT_TEST_CDK:-${XDG_CACHE_HOME:-$HOME/.cache}/cdkbot/test-cdk/aws-cdk-lib@2.276.0}
if [ ! -f "$cache/node_modules/aws-cdk-lib/package.json" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.install-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && echo '{"private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error aws-cdk-lib@2.276.0 constructs@10 >&2)
  rm -rf "$cache/node_modules" && mv "$tmp/node_modules" "$cache/node_modules"
fi
echo "$cache/node_modules"
