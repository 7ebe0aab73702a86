#!/usr/bin/env bash
# Side-by-side deploy speed on the same moto_server (the real CDK bootstrap template deployed into
# it): `cdkbot deploy` and the reference CDK CLI (`cdk deploy --all --require-approval never`, npm,
# pinned) on the twelve-stack deploy-graph assembly synthesized by aws-cdk-lib 2.276.0, each into a
# freshly reset and bootstrapped moto, same concurrency. Prints wall times, the ratio, cdkbot's
# critical path (the slowest dependency chain of its own per-stack times) with wall/critical, and
# cdkbot's CloudFormation/SSM calls per stack. Usage: scripts/benchdeploy/run.sh [CONCURRENCY]
# (needs node, the npm registry, python; nothing leaves loopback)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
asm="$root/compat-fixtures/aws-cdk-lib@2.276.0/deploy-graph"
conc=${1:-4}
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
import sys, time, boto3
cfn = boto3.client("cloudformation")
cfn.create_stack(StackName="CDKToolkit", TemplateBody=open(sys.argv[1]).read(), Capabilities=["CAPABILITY_NAMED_IAM"])
while cfn.describe_stacks(StackName="CDKToolkit")["Stacks"][0]["StackStatus"] != "CREATE_COMPLETE":
    time.sleep(0.2)
PY
}
now() { date +%s%N; }

fresh
start=$(now)
"$tmp/cdkbot" deploy "$asm" --format json --concurrency "$conc" --revision bench >"$tmp/cdkbot.json" 2>"$tmp/cdkbot.log" ||
  { tail -n 20 "$tmp/cdkbot.log"; exit 1; }
cdkbot_s=$(( $(now) - start ))
"$tmp/cdkbot" plan "$asm" --format json >"$tmp/plan.json"

fresh
start=$(now)
set +e
(cd "$tmp" && ./node_modules/.bin/cdk deploy --app "$asm" --all --require-approval never --concurrency "$conc" \
  --progress events ${CDK_BENCH_FLAGS:-} >"$tmp/cdk.log" 2>&1)
cdk_rc=$?
set -e
cdk_s=$(( $(now) - start ))

"$py" - "$tmp/cdkbot.json" "$tmp/plan.json" "$cdkbot_s" "$cdk_s" "$cdk_rc" "$tmp/cdk.log" "$cli_version" "$conc" <<'PY'
import json, sys
rep, plan = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
cdkbot_s, cdk_s, cdk_rc, log, ver, conc = int(sys.argv[3]) / 1e9, int(sys.argv[4]) / 1e9, int(sys.argv[5]), sys.argv[6], sys.argv[7], sys.argv[8]
took = {s["stack"]: s["seconds"] for s in rep["stacks"]}
deps = {s["id"]: s.get("dependsOn", []) for s in plan["deploy"]["stacks"]}
memo = {}
def finish(i):
    if i not in memo:
        memo[i] = max([finish(d) for d in deps[i]], default=0) + took[i]
    return memo[i]
critical = max(finish(i) for i in deps)
calls = [s["apiCalls"] for s in rep["stacks"]]
print(f"stacks: {len(took)}, all {set(s['result'] for s in rep['stacks'])}; concurrency {conc}")
print(f"cdkbot deploy (whole process):                 {cdkbot_s:7.2f} s")
print(f"cdkbot run (publish + deploy, in-process):      {rep['seconds']:7.2f} s")
print(f"cdkbot critical path (slowest chain of stacks,  {critical:7.2f} s   run/critical = {rep['seconds'] / critical:.2f}, whole/critical = {cdkbot_s / critical:.2f}")
print(f"  each stack's publish + deploy time)")
print(f"cdkbot CloudFormation+SSM calls: {sum(calls)} total, {min(calls)}-{max(calls)} per stack")
if cdk_rc == 0:
    print(f"cdk deploy {ver} (whole process):            {cdk_s:7.2f} s")
    print(f"ratio (cdk / cdkbot): {cdk_s / cdkbot_s:.2f}x")
else:
    print(f"cdk deploy {ver} failed (exit {cdk_rc}) after {cdk_s:.2f} s; last lines:")
    print("".join(open(log).readlines()[-15:]))
    import shutil; shutil.copy(log, "/tmp/benchdeploy-cdk.log")
PY
