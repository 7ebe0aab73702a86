#!/usr/bin/env bash
# Side-by-side speed and memory of cdkbot's diff and the reference @aws-cdk/cloudformation-diff
# (pinned 2.187.5 with @aws-cdk/aws-service-spec 0.1.216), in one run, on the same inputs:
#   1. in-process diff of a 500-resource pair (spec loaded)       goal: cdkbot ≥ 50× faster
#   2. a whole process diffing a small pair: wall time and peak RSS  goal: ≥ 50× faster, ≥ 10× less memory
#   3. cdkbot on a 100-stack assembly pair vs the reference on ONE of its stacks (fresh process)
#   4. growth: 500 → 10,000 resources (linear means ~20×)
# Usage: scripts/benchdiff/run.sh   (needs node and the npm registry; prints a table of ratios)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && echo '{"private":true}' >package.json &&
  npm install --no-audit --no-fund --loglevel=error @aws-cdk/cloudformation-diff@2.187.5 @aws-cdk/aws-service-spec@0.1.216 >/dev/null)
export NODE_PATH="$tmp/node_modules"
(cd "$root" && go build -o "$tmp/cdkbot" ./cmd/cdkbot)
ours=$(cd "$root" && go run ./scripts/benchdiff -out "$tmp/in")
ref=$(node "$root/scripts/benchdiff/reference.js" "$tmp/in")

measure() { # prints "seconds maxrss_kb": mean wall time of 10 runs (ns clock), peak RSS of one
  local start end rss
  rss=$(/usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -n 1)
  start=$(date +%s%N)
  for _ in 1 2 3 4 5 6 7 8 9 10; do "$@" >/dev/null; done
  end=$(date +%s%N)
  echo "$(python3 -c "print(($end - $start) / 10 / 1e9)") $rss"
}
read -r cs cm < <(measure "$tmp/cdkbot" diff "$tmp/in/small-old.json" "$tmp/in/small-new.json" --format json)
read -r ns nm < <(measure node "$root/scripts/benchdiff/one.js" "$tmp/in/small-old.json" "$tmp/in/small-new.json")
read -r as _ < <(measure "$tmp/cdkbot" diff "$tmp/in/assembly-old" "$tmp/in/assembly-new" --format json)
read -r os1 _ < <(measure node "$root/scripts/benchdiff/one.js" "$tmp/in/assembly-old/Stack000.template.json" "$tmp/in/assembly-new/Stack000.template.json")

python3 - "$ours" "$ref" "$cs" "$cm" "$ns" "$nm" "$as" "$os1" <<'PY'
import json, sys
ours, ref = json.loads(sys.argv[1]), json.loads(sys.argv[2])
cs, cm, ns, nm, asm, one = map(float, sys.argv[3:9])
rows = [
    ("in-process diff, 500 resources", f"{ours['pair500_ms']:.2f} ms", f"{ref['pair500_ms']:.1f} ms", ref['pair500_ms'] / ours['pair500_ms'], "≥ 50×"),
    ("in-process diff, 10,000 resources", f"{ours['pair10000_ms']:.1f} ms", f"{ref['pair10000_ms']:.0f} ms", ref['pair10000_ms'] / ours['pair10000_ms'], ""),
    ("whole process, small pair (wall)", f"{cs*1000:.0f} ms", f"{ns*1000:.0f} ms", ns / max(cs, 0.001), "≥ 50×"),
    ("whole process, small pair (peak RSS)", f"{cm/1024:.1f} MB", f"{nm/1024:.1f} MB", nm / cm, "≥ 10×"),
    ("100-stack assembly (cdkbot) vs ONE stack (reference)", f"{asm*1000:.0f} ms", f"{one*1000:.0f} ms", one / max(asm, 0.001), "> 1×"),
]
print(f"{'measure':<55} {'cdkbot':>10} {'reference':>10} {'ratio':>8}  goal")
for name, a, b, r, goal in rows:
    print(f"{name:<55} {a:>10} {b:>10} {r:>7.1f}×  {goal}")
print(f"growth 500 → 10,000 resources: cdkbot {ours['pair10000_ms']/ours['pair500_ms']:.1f}×, reference {ref['pair10000_ms']/ref['pair500_ms']:.1f}× (20× is linear)")
PY
