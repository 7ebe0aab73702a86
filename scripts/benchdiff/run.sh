#!/usr/bin/env bash
# Side by side, in one run, on the same inputs: cdkbot's diff and the reference
# (@aws-cdk/cloudformation-diff 2.187.5, the newest served here, with @aws-cdk/aws-service-spec
# 0.1.216: fullDiff + formatDifferences in node, scripts/benchdiff/assembly.js), as users diff:
# whole processes on whole cloud assemblies. cdkbot is built as releases are (CGO_ENABLED=0,
# -trimpath, -ldflags "-s -w").
#   1. real assembly pairs: every app of compat-fixtures between consecutive framework versions
#      (aws-cdk-core 1.20.0 → … → aws-cdk-lib 2.276.0, where both have the app): paired run by
#      run, interleaved (ROUNDS rounds; each round runs both sides back to back, alternating which
#      goes first); per pair min / median / max of the ratios reference ÷ cdkbot, wall and peak RSS.
#      Goals: median pair ≥ 50× (wall); the CDK Pipelines app (pipeline) ≥ 25× on each of its pairs.
#   2. `cdkbot version`, whole process, 60 runs on its own (goal ≤ 5 ms median), beside /bin/true
#      in the same harness (the least a process costs there)
#   3. growth: assemblies of 1, 10, 100 and 1,000 stacks × 200 resources (every resource replaced
#      or updated), both sides, wall and peak RSS, and the peak RSS each stack adds
#      ((peak(N) − peak(1)) ÷ (N − 1)). Goals: at 1,000 stacks ≤ ⅓ of the reference's peak, and a
#      per-stack cost ≤ 1.1 × the 10-stack run's. The Markdown diff and the review (as posted) of
#      the same pairs are printed beside, cdkbot alone.
#   4. with INPROCESS=1, in-process diff of template pairs (500 and 10,000 resources; spec loaded):
#      the reference's loops take about ten minutes
# Usage: scripts/benchdiff/run.sh   (ROUNDS=7; SCALE="1 10 100 1000"; GROWTH_ONLY=1 runs part 3
# alone; REF_NODE_MODULES=DIR reuses an install of the reference; needs node and the npm registry
# otherwise)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/benchdiff"
rounds=${ROUNDS:-7}
scale=${SCALE:-1 10 100 1000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${REF_NODE_MODULES:-}" ]; then
  export NODE_PATH="$REF_NODE_MODULES"
else
  (cd "$tmp" && echo '{"private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error @aws-cdk/cloudformation-diff@2.187.5 \
      @aws-cdk/aws-service-spec@0.1.216 >/dev/null)
  export NODE_PATH="$tmp/node_modules"
fi
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/cdkbot" ./cmd/cdkbot)
inproc=$(cd "$root" && go run ./scripts/benchdiff -out "$tmp/in" -stacks "$(echo $scale | tr ' ' ,)")

# The real pairs, in framework order (versions.txt).
echo '[]' >"$tmp/real-results.json"
[ -n "${GROWTH_ONLY:-}" ] || python3 - "$root/compat-fixtures" "$tmp/cdkbot" "$here/assembly.js" >"$tmp/real.json" <<'PY'
import json, os, sys
fixtures, cdkbot, ref = sys.argv[1:]
versions = []
for line in open(os.path.join(fixtures, "versions.txt")):
    if line.strip() and not line.startswith("#"):
        pkg, ver = line.split()
        versions.append(f"{pkg.split('/')[-1]}@{ver}")
apps = sorted(a[:-3] for a in os.listdir(os.path.join(fixtures, "apps")) if a.endswith(".js") and a != "cdk.js")
cases = []
for app in apps:
    have = [v for v in versions if os.path.isfile(os.path.join(fixtures, v, app, "manifest.json"))]
    for old, new in zip(have, have[1:]):
        o, n = os.path.join(fixtures, old, app), os.path.join(fixtures, new, app)
        cases.append({"name": f"{app} {old} → {new}", "group": app,
                      "ours": [cdkbot, "diff", o, n, "--format", "json"], "ref": ["node", ref, o, n]})
json.dump(cases, sys.stdout)
PY
[ -n "${GROWTH_ONLY:-}" ] || python3 "$here/paired.py" "$tmp/real.json" "$rounds" >"$tmp/real-results.json"
# Start-up on its own (between node processes it reads slower), beside the harness's own floor:
# /bin/true, the least a process can cost here.
echo "[{\"name\": \"version\", \"group\": \"version\", \"ours\": [\"$tmp/cdkbot\", \"version\"]},
  {\"name\": \"true\", \"group\": \"floor\", \"ours\": [\"/bin/true\"]}]" >"$tmp/version.json"
[ -n "${GROWTH_ONLY:-}" ] || python3 "$here/paired.py" "$tmp/version.json" 60 >"$tmp/version-results.json"

python3 - "$tmp" "$here/assembly.js" "$scale" >"$tmp/scale.json" <<'PY'
import json, sys
tmp, ref, scale = sys.argv[1], sys.argv[2], sys.argv[3].split()
cases = []
for n in scale:
    old, new = f"{tmp}/in/scale-{n}-old", f"{tmp}/in/scale-{n}-new"
    cases.append({"name": n, "group": "scale", "ours": [f"{tmp}/cdkbot", "diff", old, new, "--format", "json"],
                  "ref": ["node", ref, old, new]})
    # cdkbot alone: the Markdown diff and the review as posted (the PR comment), on the same pair
    cases.append({"name": f"{n} markdown", "group": "scale-markdown",
                  "ours": [f"{tmp}/cdkbot", "diff", old, new, "--format", "markdown"]})
    cases.append({"name": f"{n} review", "group": "scale-review", "ours": [f"{tmp}/cdkbot", "review", "--base-assembly", old,
                  "--head-assembly", new, "--deployed", "off", "--format", "markdown"]})
json.dump(cases, sys.stdout)
PY
# The growth curve is long (the reference takes minutes at 1,000 stacks): one round.
python3 "$here/paired.py" "$tmp/scale.json" 1 >"$tmp/scale-results.json"
ref='{}'
[ -z "${INPROCESS:-}" ] || ref=$(node "$here/reference.js" "$tmp/in")

[ -n "${GROWTH_ONLY:-}" ] || cat "$tmp/version-results.json" >"$tmp/version-out.json"
[ -s "$tmp/version-out.json" ] || echo '[]' >"$tmp/version-out.json"
python3 - "$tmp/real-results.json" "$tmp/scale-results.json" "$inproc" "$ref" "$rounds" "$tmp/version-out.json" <<'PY'
import json, statistics, sys
real, scale_all = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
startup = {c["group"]: c for c in json.load(open(sys.argv[6]))}
scale = [c for c in scale_all if c["group"] == "scale"]
others = {c["name"]: c for c in scale_all if c["group"] != "scale"}
ours_in, ref_in, rounds = json.loads(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5]
def ratios(c, i):  # reference ÷ cdkbot, run by run (i: 0 wall, 1 peak RSS)
    return sorted(r[i] / o[i] for o, r in zip(c["ours"], c["ref"]))
def mmm(xs, f="{:.1f}"):
    return " / ".join(f.format(x) for x in (xs[0], statistics.median(xs), xs[-1]))
if real:
    print(f"1. real assembly pairs, whole processes, {rounds} paired rounds; min / median / max")
    print(f"   {'pair':<52} {'cdkbot ms':>20} {'reference ms':>22} {'wall ratio':>20} {'RSS ratio':>16}")
    pairs = real
    for c in pairs:
        print(f"   {c['name']:<52} {mmm(sorted(o[0] for o in c['ours'])):>20} {mmm(sorted(r[0] for r in c['ref'])):>22}"
              f" {mmm(ratios(c, 0)):>20} {mmm(ratios(c, 1)):>16}")
    med = sorted(statistics.median(ratios(c, 0)) for c in pairs)
    mem = sorted(statistics.median(ratios(c, 1)) for c in pairs)
    print(f"   median pair (of {len(pairs)}): wall {statistics.median(med):.1f}× (goal ≥ 50×), peak RSS {statistics.median(mem):.1f}×;"
          f" worst pair {med[0]:.1f}×, best {med[-1]:.1f}×")
    pipe = [statistics.median(ratios(c, 0)) for c in pairs if c["group"] == "pipeline"]
    print(f"   CDK Pipelines app (pipeline), median ratio of each pair: {', '.join(f'{x:.1f}×' for x in pipe)}"
          f"; lowest {min(pipe):.1f}× (goal ≥ 25×)")
    v, floor = startup["version"], startup["floor"]
    print(f"2. cdkbot version, {len(v['ours'])} runs: {mmm(sorted(o[0] for o in v['ours']), '{:.2f}')} ms, "
          f"{mmm(sorted(o[1] / 1024 for o in v['ours']))} MiB (goal ≤ 5 ms median); "
          f"/bin/true in the same harness {mmm(sorted(o[0] for o in floor['ours']), '{:.2f}')} ms")
print("3. growth, N stacks × 200 resources, one run each side")
print(f"   {'stacks':>6} {'cdkbot ms':>10} {'cdkbot MiB':>11} {'reference ms':>13} {'reference MiB':>14} {'wall ratio':>11}"
      f" {'RSS ÷ reference':>16} {'cdkbot KiB/stack':>17}")
base = scale[0]["ours"][0][1]
per = {}
for c in scale:
    n = int(c["name"])
    (ow, orss), (rw, rrss) = c["ours"][0], c["ref"][0]
    per[n] = (orss - base) / (n - 1) if n > 1 else None
    cost = f"{per[n]:.0f}" if per[n] is not None else "-"
    print(f"   {n:>6} {ow:>10.0f} {orss / 1024:>11.1f} {rw:>13.0f} {rrss / 1024:>14.1f} {rw / ow:>10.1f}× {orss / rrss:>16.2f} {cost:>17}")
if 10 in per and 1000 in per:
    top = next(c for c in scale if c["name"] == "1000")
    print(f"   1,000 stacks: cdkbot's peak is {top['ours'][0][1] / top['ref'][0][1]:.2f} of the reference's (goal ≤ 0.33);"
          f" per-stack cost {per[1000] / per[10]:.2f} × the 10-stack run's (goal ≤ 1.10)")
print("   the same pairs, cdkbot alone: wall ms / peak MiB of the Markdown diff and of the review as posted")
print(f"   {'stacks':>6} {'diff --format markdown':>24} {'review --format markdown':>26} {'review ÷ reference RSS':>24}")
for c in scale:
    md, rv = others.get(f"{c['name']} markdown"), others.get(f"{c['name']} review")
    if md and rv:
        (mw, mr), (rw_, rr) = md["ours"][0], rv["ours"][0]
        print(f"   {c['name']:>6} {mw:>12.0f} / {mr / 1024:>7.1f} {rw_:>14.0f} / {rr / 1024:>7.1f} {rr / c['ref'][0][1]:>24.2f}")
if ref_in:
    print("4. in-process template diff (spec loaded), median of the loops")
for name in ("pair500", "pair10000") if ref_in else ():
    print(f"   {name:<10} cdkbot {ours_in[name + '_ms']:.2f} ms   reference {ref_in[name + '_ms']:.1f} ms"
          f"   {ref_in[name + '_ms'] / ours_in[name + '_ms']:.0f}×")
PY
