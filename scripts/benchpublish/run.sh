#!/usr/bin/env bash
# Side-by-side publish speed: the reference `cdk-assets` CLI (npm, pinned 4.7.3) and
# `cdkbot publish` on the same generated assembly (40 file assets of 1–20 MB, a quarter of them
# zipped directories) against the same moto_server, each into an emptied bucket, twice each,
# alternating; prints best wall times and the ratio (goal: cdkbot ≥ 3× faster). Also the peak
# RSS of each. Usage: scripts/benchpublish/run.sh [N_ASSETS]  (needs node, npm registry, python)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
moto_pid=
cleanup() { [ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
(cd "$tmp" && echo '{"private":true}' >package.json &&
  npm install --no-audit --no-fund --loglevel=error cdk-assets@4.7.3 >/dev/null)
(cd "$root" && go build -o "$tmp/cdkbot" ./cmd/cdkbot && go build -o "$tmp/benchpublish" ./scripts/benchpublish)
"$tmp/benchpublish" gen "$tmp/asm" "${1:-40}"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$(bash "$root/scripts/moto-server.sh")" "$root/internal/testutil/moto/launcher.py" -H 127.0.0.1 -p "$port" >"$tmp/moto.log" 2>&1 &
moto_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/moto-api/" >/dev/null && break; sleep 0.1; done
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
  AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true NODE_NO_WARNINGS=1

timed() { # prints "seconds maxrss_kb" of one run of the command, into an emptied bucket
  "$tmp/benchpublish" reset
  local start end rss
  start=$(date +%s%N)
  rss=$(/usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -n 1)
  end=$(date +%s%N)
  echo "$(python3 -c "print(($end - $start) / 1e9)") $rss"
}
best() { python3 -c "import sys; print(min(float(x) for x in sys.argv[1:]))" "$@"; }
read -r c1 cm < <(timed "$tmp/cdkbot" publish "$tmp/asm")
read -r r1 rm < <(timed "$tmp/node_modules/.bin/cdk-assets" publish -p "$tmp/asm/Bench.assets.json")
read -r c2 _ < <(timed "$tmp/cdkbot" publish "$tmp/asm")
read -r r2 _ < <(timed "$tmp/node_modules/.bin/cdk-assets" publish -p "$tmp/asm/Bench.assets.json")
cb=$(best "$c1" "$c2"); rb=$(best "$r1" "$r2")
printf '%-28s %10s %12s\n' "" "wall (s)" "peak RSS"
printf '%-28s %10.2f %9d MB\n' "cdkbot publish" "$cb" $((cm / 1024))
printf '%-28s %10.2f %9d MB\n' "cdk-assets 4.7.3 publish" "$rb" $((rm / 1024))
python3 -c "print(f'ratio (cdk-assets / cdkbot): {$rb / $cb:.2f}x faster')"
