#!/usr/bin/env bash
# Prints the path of a moto_server executable (Python moto 5.x, the AWS emulator the integration
# tests run): the one on PATH when there is one, otherwise one installed once into a virtualenv
# in the cache directory. Run by the tests themselves (internal/testutil/moto).
set -euo pipefail
if command -v moto_server >/dev/null 2>&1; then
  command -v moto_server
  exit 0
fi
venv=${CDKBOT_TEST_MOTO:-${XDG_CACHE_HOME:-$HOME/.cache}/cdkbot/moto5}
if [ ! -x "$venv/bin/moto_server" ]; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]>=5,<6' >&2
fi
echo "$venv/bin/moto_server"
