#!/usr/bin/env bash
# Refreshes bootstrap-template.yaml: the REAL CDK bootstrap template, as `cdk bootstrap
# --show-template` prints it, taken from the aws-cdk npm package (the CDK CLI). The version is
# recorded in bootstrap-template.version. Usage: fetch-bootstrap.sh [VERSION]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-2.1148.1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && echo '{"private":true}' >package.json &&
  npm install --no-audit --no-fund --ignore-scripts --loglevel=error "aws-cdk@$version" >&2)
cp "$work/node_modules/aws-cdk/lib/api/bootstrap/bootstrap-template.yaml" "$here/bootstrap-template.yaml"
echo "aws-cdk $version" >"$here/bootstrap-template.version"
