#!/usr/bin/env bash
# Paired deploy speed on the same moto_server (the real CDK bootstrap template deployed into it):
# `cdkbot deploy` and the reference CDK CLI (`cdk deploy --all --require-approval never`, npm, pinned)
# on the twelve-stack deploy-graph assembly synthesized by aws-cdk-lib 2.276.0, same concurrency.
# ROUNDS rounds (default 3); each round deploys with both tools back to back, each into a freshly reset
# and bootstrapped moto (fresh stacks), alternating which tool goes first. After every deploy the
# stacks' own CloudFormation events are read from the emulator (DescribeStackEvents): a stack takes
# from its first CREATE_IN_PROGRESS/UPDATE_IN_PROGRESS to its terminal CREATE_COMPLETE/UPDATE_COMPLETE,
# and the critical path is the slowest chain of those times through the stack dependencies of the
# assembly's manifest.json -- the same measure for both tools, none of it reported by either tool.
# Prints, per round and tool, the whole-process wall time beside that critical path and the span of
# the events (first IN_PROGRESS to last COMPLETE), then min/median/max of the ratio cdk / cdkbot.
# Usage: [ROUNDS=3] scripts/benchdeploy/run.sh [CONCURRENCY]
# (needs node, the npm registry, python; nothing leaves loopback)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
asm="$root/compat-fixtures/aws-cdk-lib@2.276.0/deploy-graph"
conc=${1:-4}
rounds=${ROUNDS:-3}
case $rounds in '' | *[!0-9]* | 0) echo "ROUNDS must be a positive integer, not '$rounds'" >&2; exit 2 ;; esac
cli_version=2.1148.1
tmp=$(mktemp -d)
moto_pid=
cleanup() { [ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
(cd "$tmp" && echo '{"private":true}' >package.json &&
  npm install --no-audit --no-fund --loglevel=error "aws-cdk@$cli_version" >/dev/null)
(cd "$root" && go build -o "$tmp/cdkbot" ./cmd/cdkbot)

py=$(bash "$root/scripts/moto-server.sh")   # boto3 comes with moto
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$py" "$root/internal/testutil/moto/launcher.py" -H 127.0.0.1 -p "$port" >"$tmp/moto.log" 2>&1 &
moto_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/moto-api/" >/dev/null && break; sleep 0.1; done
# "localhost": moto reads a TemplateURL on the endpoint itself (as the CDK CLI builds it there) only by that name.
export AWS_ENDPOINT_URL="http://localhost:$port" AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
  AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true NODE_NO_WARNINGS=1 \
  CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=1

fresh() { # reset moto and deploy the real bootstrap template as CDKToolkit
  curl -sf -X POST "http://127.0.0.1:$port/moto-api/reset" >/dev/null
  "$py" - "$root/internal/testutil/moto/bootstrap-template.yaml" <<'PY'
import os, sys, time, boto3
cfn = boto3.client("cloudformation", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
cfn.create_stack(StackName="CDKToolkit", TemplateBody=open(sys.argv[1]).read(), Capabilities=["CAPABILITY_NAMED_IAM"])
while cfn.describe_stacks(StackName="CDKToolkit")["Stacks"][0]["StackStatus"] != "CREATE_COMPLETE":
    time.sleep(0.2)
PY
}

events() { # the emulator's own stack events of every stack in the assembly, as JSON, to $1
  "$py" - "$asm/manifest.json" "$1" <<'PY'
import json, os, sys, boto3
cfn = boto3.client("cloudformation", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
manifest = json.load(open(sys.argv[1]))
out = {}
for aid, a in manifest["artifacts"].items():
    if a["type"] != "aws:cloudformation:stack":
        continue
    name = a.get("properties", {}).get("stackName", aid)
    evs = []
    try:
        for page in cfn.get_paginator("describe_stack_events").paginate(StackName=name):
            evs += [{"t": e["Timestamp"].timestamp(), "status": e["ResourceStatus"]} for e in page["StackEvents"]
                    if e["LogicalResourceId"] == name and e["ResourceType"] == "AWS::CloudFormation::Stack"]
    except cfn.exceptions.ClientError as e:  # never created
        evs = [{"t": None, "status": "MISSING: " + str(e)}]
    out[aid] = evs
json.dump(out, open(sys.argv[2], "w"))
PY
}

now() { date +%s%N; }

run_cdkbot() { # $1 round
  local start rc
  start=$(now)
  set +e
  "$tmp/cdkbot" deploy "$asm" --format json --concurrency "$conc" --revision "bench-$1" \
    >"$tmp/cdkbot-$1.json" 2>"$tmp/cdkbot-$1.log"
  rc=$?
  set -e
  echo "$(( $(now) - start )) $rc" >"$tmp/cdkbot-$1.wall"
}

run_cdk() { # $1 round
  local start rc
  start=$(now)
  set +e
  (cd "$tmp" && ./node_modules/.bin/cdk deploy --app "$asm" --all --require-approval never --concurrency "$conc" \
    --progress events ${CDK_BENCH_FLAGS:-} >"$tmp/cdk-$1.log" 2>&1)
  rc=$?
  set -e
  echo "$(( $(now) - start )) $rc" >"$tmp/cdk-$1.wall"
}

for r in $(seq "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then order="cdkbot cdk"; else order="cdk cdkbot"; fi
  echo "$order" >"$tmp/order-$r"
  for tool in $order; do
    fresh
    "run_$tool" "$r"
    events "$tmp/$tool-$r.events.json"
  done
done

"$py" - "$tmp" "$asm/manifest.json" "$rounds" "$cli_version" "$conc" <<'PY'
import json, os, statistics, sys
tmp, manifest, rounds, ver, conc = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3]), sys.argv[4], sys.argv[5]
arts = manifest["artifacts"]
stacks = [a for a, v in arts.items() if v["type"] == "aws:cloudformation:stack"]

def stack_deps(aid, seen=None):  # stack dependencies, through any non-stack artifact (asset manifests)
    out = set()
    for d in arts[aid].get("dependencies", []):
        if d not in arts:
            continue
        if arts[d]["type"] == "aws:cloudformation:stack":
            out.add(d)
        else:
            out |= stack_deps(d)
    return out
deps = {s: stack_deps(s) for s in stacks}

def measure(path):
    """Per stack: first CREATE/UPDATE_IN_PROGRESS to the terminal CREATE/UPDATE_COMPLETE, by the emulator's clock."""
    evs, took, bad, first, last = json.load(open(path)), {}, [], None, None
    for s in stacks:
        e = sorted((x for x in evs.get(s, []) if x["t"] is not None), key=lambda x: x["t"])
        starts = [x["t"] for x in e if x["status"] in ("CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS")]
        if not e or not starts or e[-1]["status"] not in ("CREATE_COMPLETE", "UPDATE_COMPLETE"):
            bad.append(f"{s}: {e[-1]['status'] if e else (evs.get(s) or [{'status': 'no events'}])[-1]['status']}")
            continue
        took[s] = e[-1]["t"] - starts[0]
        first = min(first, starts[0]) if first is not None else starts[0]
        last = max(last, e[-1]["t"]) if last is not None else e[-1]["t"]
    if bad:
        return None, None, None, bad
    memo = {}
    def finish(s):  # (time, chain) of the slowest chain ending with s
        if s not in memo:
            best = max((finish(d) for d in deps[s]), default=(0.0, []), key=lambda x: x[0])
            memo[s] = (best[0] + took[s], best[1] + [s])
        return memo[s]
    crit, chain = max((finish(s) for s in stacks), key=lambda x: x[0])
    return crit, chain, last - first, []

def wall(tool, r):
    ns, rc = open(f"{tmp}/{tool}-{r}.wall").read().split()
    return int(ns) / 1e9, int(rc)

print(f"deploy-graph: {len(stacks)} stacks, concurrency {conc}, {rounds} paired rounds; cdk = CDK CLI {ver}")
print("critical path = slowest dependency chain of the stacks' CREATE/UPDATE_IN_PROGRESS -> *_COMPLETE times")
print("from the emulator's DescribeStackEvents; span = first IN_PROGRESS to last COMPLETE of any stack")
print(f"{'round':<6}{'tool':<8}{'wall s':>8}{'critical s':>12}{'span s':>9}{'wall/critical':>15}")
ratios, crit_of, failed = [], {"cdkbot": [], "cdk": []}, []
for r in range(1, rounds + 1):
    order = open(f"{tmp}/order-{r}").read().split()
    w = {}
    for tool in order:
        secs, rc = wall(tool, r)
        crit, chain, span, bad = measure(f"{tmp}/{tool}-{r}.events.json")
        if rc != 0 or bad:
            failed.append((r, tool))
            print(f"{r:<6}{tool:<8}{secs:8.2f}  FAILED (exit {rc}){'; ' + ', '.join(bad) if bad else ''}")
            log = f"{tmp}/{tool}-{r}.log"
            print("".join("      " + l for l in open(log).readlines()[-15:]))
            continue
        w[tool] = secs
        crit_of[tool].append((crit, chain))
        print(f"{r:<6}{tool:<8}{secs:8.2f}{crit:12.3f}{span:9.3f}{secs / crit:15.1f}")
    if len(w) == 2:
        ratios.append(w["cdk"] / w["cdkbot"])
        print(f"{'':<6}{'cdk/cdkbot wall':<22}{ratios[-1]:.2f}x   ({order[0]} first)")
calls = []
for r in range(1, rounds + 1):
    try:
        calls += [s["apiCalls"] for s in json.load(open(f"{tmp}/cdkbot-{r}.json"))["stacks"]]
    except (OSError, ValueError, KeyError):
        pass
for tool in ("cdkbot", "cdk"):
    if crit_of[tool]:
        c = sorted(x[0] for x in crit_of[tool])
        chain = max(crit_of[tool], key=lambda x: x[0])[1]
        print(f"{tool} critical path: min {c[0]:.3f} / median {statistics.median(c):.3f} / max {c[-1]:.3f} s"
              f"  (slowest chain: {' -> '.join(chain)})")
if calls:
    print(f"cdkbot CloudFormation+SSM calls per stack: {min(calls)}-{max(calls)} ({sum(calls) / rounds:.0f} per deploy)")
if ratios:
    s = sorted(ratios)
    print(f"ratio cdk / cdkbot wall over {len(s)} paired rounds: min {s[0]:.2f}x / median {statistics.median(s):.2f}x / max {s[-1]:.2f}x")
if failed:
    print("failed: " + ", ".join(f"round {r} {t}" for r, t in failed))
    sys.exit(1)
PY
