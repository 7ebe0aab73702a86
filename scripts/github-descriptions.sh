#!/usr/bin/env bash
# Installs GitHub's own descriptions of its API, pinned, from the npm registry, into a cache
# directory, once, and prints that directory. The GitHub tests (internal/testutil/ghspec) run it
# themselves, so a fresh machine or CI needs nothing else. What it keeps:
#   openapi/api.github.com.json, openapi/ghes-3.19.json  @octokit/openapi (GitHub's official REST
#                                                        OpenAPI description, github/rest-api-description)
#   graphql/schema.graphql                               @octokit/graphql-schema (GitHub's GraphQL schema)
#   webhooks/api.github.com.json                         @octokit/webhooks-examples (real webhook payloads)
# Each tarball is checked against the registry integrity pinned here before anything is kept.
set -euo pipefail

openapi=23.0.2 openapi_sri=sha512-pV8M7L9GY23AybNvTmo2nyjmpmnt6+2sRE/tqr0ZLQcPS4lnw7u5eZGNmwRNkBC3D7gZXbFx5AHzLUVRBXGDhg==
graphql=15.26.1 graphql_sri=sha512-RFDC2MpRBd4AxSRvUeBIVeBU7ojN/SxDfALUd7iVYOSeEK3gZaqR2MGOysj4Zh2xj2RY5fQAUT+Oqq7hWTraMA==
webhooks=7.6.1 webhooks_sri=sha512-De6U3XB6O3DtCa7bKgCMzTHdeopqqZ6SNivMYJnK65ierKL1AnNIA0tkRYCRS7lwGT792d+Ps1WbfHlso6MynQ==

cache=${CDKBOT_TEST_GITHUB:-${XDG_CACHE_HOME:-$HOME/.cache}/cdkbot/github-descriptions/openapi@$openapi-graphql@$graphql-webhooks@$webhooks}
if [ -f "$cache/complete" ]; then
  echo "$cache"
  exit 0
fi
mkdir -p "$(dirname "$cache")"
tmp=$(mktemp -d "$(dirname "$cache")/.install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# fetch NAME VERSION INTEGRITY: the package tarball, checked, as $tmp/NAME.tgz
fetch() {
  local file
  file=$(cd "$tmp" && npm pack --silent --loglevel=error "@octokit/$1@$2" 2>/dev/null | tail -n 1)
  local got="sha512-$(openssl dgst -sha512 -binary "$tmp/$file" | base64 -w0)"
  if [ "$got" != "$3" ]; then
    echo "github-descriptions: @octokit/$1@$2 has integrity $got, want $3" >&2
    exit 1
  fi
  mv "$tmp/$file" "$tmp/$1.tgz"
}
fetch openapi "$openapi" "$openapi_sri"
fetch graphql-schema "$graphql" "$graphql_sri"
fetch webhooks-examples "$webhooks" "$webhooks_sri"

mkdir -p "$tmp/out/openapi" "$tmp/out/graphql" "$tmp/out/webhooks"
tar -xzf "$tmp/openapi.tgz" -C "$tmp" package/generated/api.github.com.json package/generated/ghes-3.19.json
mv "$tmp/package/generated/api.github.com.json" "$tmp/package/generated/ghes-3.19.json" "$tmp/out/openapi/"
rm -rf "$tmp/package"
tar -xzf "$tmp/graphql-schema.tgz" -C "$tmp" package/schema.graphql
mv "$tmp/package/schema.graphql" "$tmp/out/graphql/"
rm -rf "$tmp/package"
tar -xzf "$tmp/webhooks-examples.tgz" -C "$tmp" package/api.github.com/index.json
mv "$tmp/package/api.github.com/index.json" "$tmp/out/webhooks/api.github.com.json"
printf 'openapi %s\ngraphql-schema %s\nwebhooks-examples %s\n' "$openapi" "$graphql" "$webhooks" >"$tmp/out/complete"

rm -rf "$cache"
mv "$tmp/out" "$cache"
echo "$cache"
