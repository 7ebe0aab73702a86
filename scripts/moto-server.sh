#!/usr/bin/env bash
# Prints the path of a Python interpreter that has moto 5.x (the AWS emulator the integration tests
# run): python3 when it can import moto's server, otherwise one installed once into a virtualenv in
# the cache directory. Start the emulator with the project's launcher, which closes moto's
# CloudFormation gaps (internal/testutil/moto/README.md):
#   "$(scripts/moto-server.sh)" internal/testutil/moto/launcher.py -H 127.0.0.1 -p PORT
# Run by the tests themselves (internal/testutil/moto), the benchmark scripts and scripts/e2e/run.sh.
set -euo pipefail
if python3 -c 'import moto.server, moto.cloudformation' >/dev/null 2>&1; then
  command -v python3
  exit 0
fi
venv=${CDKBOT_TEST_MOTO:-${XDG_CACHE_HOME:-$HOME/.cache}/cdkbot/moto5}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import moto.server' >/dev/null 2>&1; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]>=5,<6' >&2
fi
echo "$venv/bin/python"
