#!/usr/bin/env bash
# Side-by-side speed and memory of cdkbot's diff and the reference @aws-cdk/cloudformation-diff
# (pinned 2.187.5 with @aws-cdk/aws-service-spec 0.1.216), in one run, on the same inputs:
#   1. in-process diff of a 500-resource pair (spec loaded)          goal: cdkbot ≥ 50× faster
#   2. whole processes, 7 runs each (min / median / max, wall and peak RSS), cdkbot built as the
#      release builds it (CGO_ENABLED=0, -trimpath, -ldflags "-s -w"):
#      - a real pair with property changes (pipeline, aws-cdk-lib 2.0.0 → 2.276.0): the reference
#        loads its resource specification, as on the issue's pair     goal: ≥ 50× faster, ≥ 10× less memory
#      - a small generated pair                                       same goals
#      - the largest real pair of compat-fixtures (large-template, @aws-cdk/core 1.204.0 → aws-cdk-lib
#        2.276.0): no property update, so the reference never loads its specification and what is
#        left is node's own start-up (~110 ms); shown for the record, no goal applies
#      - `cdkbot version` alone (start-up)                            goal: ≤ 5 ms
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
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/cdkbot" ./cmd/cdkbot)
ours=$(cd "$root" && go run ./scripts/benchdiff -out "$tmp/in")
real_old="$root/compat-fixtures/aws-cdk-core@1.204.0/large-template/Large.template.json"
real_new="$root/compat-fixtures/aws-cdk-lib@2.276.0/large-template/Large.template.json"
spec_old="$root/compat-fixtures/aws-cdk-lib@2.0.0/pipeline/Pipeline.template.json"
spec_new="$root/compat-fixtures/aws-cdk-lib@2.276.0/pipeline/Pipeline.template.json"

# measure NAME CMD...: 7 runs; prints NAME and, per run, wall ms and peak RSS KiB (from wait4).
measure() {
  python3 - "$@" <<'PY'
import os, subprocess, sys, time, json
name, cmd = sys.argv[1], sys.argv[2:]
runs = []
for _ in range(7):
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    runs.append(((time.perf_counter() - start) * 1000, ru.ru_maxrss))
print(json.dumps({"name": name, "runs": runs}))
PY
}
{
  measure cdkbot-spec "$tmp/cdkbot" diff "$spec_old" "$spec_new" --format json
  measure ref-spec node "$root/scripts/benchdiff/one.js" "$spec_old" "$spec_new"
  measure cdkbot-real "$tmp/cdkbot" diff "$real_old" "$real_new" --format json
  measure ref-real node "$root/scripts/benchdiff/one.js" "$real_old" "$real_new"
  measure cdkbot-small "$tmp/cdkbot" diff "$tmp/in/small-old.json" "$tmp/in/small-new.json" --format json
  measure ref-small node "$root/scripts/benchdiff/one.js" "$tmp/in/small-old.json" "$tmp/in/small-new.json"
  measure cdkbot-version "$tmp/cdkbot" version
  measure cdkbot-assembly "$tmp/cdkbot" diff "$tmp/in/assembly-old" "$tmp/in/assembly-new" --format json
  measure ref-one-stack node "$root/scripts/benchdiff/one.js" "$tmp/in/assembly-old/Stack000.template.json" "$tmp/in/assembly-new/Stack000.template.json"
} >"$tmp/processes.jsonl"
# The reference's in-process loops last minutes at full CPU: after the whole-process runs, which
# want a quiet machine.
ref=$(node "$root/scripts/benchdiff/reference.js" "$tmp/in")

python3 - "$ours" "$ref" "$tmp/processes.jsonl" <<'PY'
import json, statistics, sys
ours, ref = json.loads(sys.argv[1]), json.loads(sys.argv[2])
proc = {}
for line in open(sys.argv[3]):
    m = json.loads(line)
    proc[m["name"]] = m["runs"]
def stats(name, i):  # min / median / max of wall ms (i=0) or peak RSS KiB (i=1)
    xs = sorted(r[i] for r in proc[name])
    return xs[0], statistics.median(xs), xs[-1]
def fmt(name, i):
    lo, med, hi = stats(name, i)
    return f"{lo:.1f} / {med:.1f} / {hi:.1f} ms" if i == 0 else f"{lo/1024:.1f} / {med/1024:.1f} / {hi/1024:.1f} MiB"
print("in-process (median of the Go benchmark loop vs the reference's loop):")
print(f"  diff, 500 resources       cdkbot {ours['pair500_ms']:.2f} ms   reference {ref['pair500_ms']:.1f} ms   {ref['pair500_ms'] / ours['pair500_ms']:.0f}×  (goal ≥ 50×)")
print(f"  diff, 10,000 resources    cdkbot {ours['pair10000_ms']:.1f} ms   reference {ref['pair10000_ms']:.0f} ms   {ref['pair10000_ms'] / ours['pair10000_ms']:.0f}×")
print(f"  growth 500 → 10,000: cdkbot {ours['pair10000_ms']/ours['pair500_ms']:.1f}×, reference {ref['pair10000_ms']/ref['pair500_ms']:.1f}× (20× is linear)")
print("whole processes, 7 runs each, min / median / max:")
for label, ours_name, ref_name, goals in [
        ("real pair with property changes (pipeline v2.0.0 → v2.276.0; the reference loads its spec)", "cdkbot-spec", "ref-spec", True),
        ("small generated pair", "cdkbot-small", "ref-small", True),
        ("largest real pair (large-template v1.204 → v2.276; no property update: the reference skips its spec)",
         "cdkbot-real", "ref-real", False)]:
    print(f"  {label}")
    for i, what, goal in [(0, "wall", "≥ 50×"), (1, "peak RSS", "≥ 10×")]:
        goal = goal if goals else "n/a"
        r = [stats(ref_name, i)[k] / stats(ours_name, i)[k] for k in range(3)]
        print(f"    {what:<9} cdkbot {fmt(ours_name, i):<28} reference {fmt(ref_name, i):<30} ratio of medians {r[1]:.1f}×"
              f" (of minimums {r[0]:.1f}×, of maximums {r[2]:.1f}×)  goal {goal}")
print(f"  cdkbot version            {fmt('cdkbot-version', 0)}, {fmt('cdkbot-version', 1)}   (goal ≤ 5 ms)")
a, one = stats("cdkbot-assembly", 0)[1], stats("ref-one-stack", 0)[1]
print(f"  100-stack assembly (cdkbot) {a:.0f} ms vs ONE stack (reference) {one:.0f} ms: {one / a:.1f}×  (goal > 1×)")
PY
