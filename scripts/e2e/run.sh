#!/usr/bin/env bash
# The whole path, end to end, on two apps the project wrote itself in the shape of public
# aws-cdk-examples apps (scripts/e2e/apps), with real packages (aws-cdk-lib 2.276.0, the CLI
# aws-cdk 2.1148.1, @aws-cdk/cloudformation-diff 2.187.5) and ten realistic pull requests
# (scripts/e2e/changes.sh):
#   api       a REST API over a DynamoDB table with a fixed tableName; five NodejsFunctions bundled
#             by the esbuild package; the root package.json's postinstall installs lambdas/
#   platform  three stacks sharing a VPC and a load balancer through exports; a Fargate service
#             whose image is a Docker image asset (ContainerImage.fromAsset)
# Each app is a git repository: main, one branch per pull request, release (main with the changes
# that should merge) and, for one app, blocked (release with a change the review blocks). The script
#   1. reviews every branch the way a user runs it: `cdkbot review --repo R --base main --head B`
#      (cdkbot installs the dependencies and synthesizes both sides as two unprivileged users), timed:
#      the app's first review with an empty cache (cold), each further pull request (next PR: the
#      dependency cache is warm), and the second one again (warm);
#   2. runs the CDK CLI path a team runs instead (npm ci + cdk synth at base and at head, cdk diff
#      --template of each changed stack), timed, right after each review (so a shared machine's load
#      weighs on both alike); the base side is measured once per app and counted in every pull
#      request's total;
#   3. compares cdkbot's per-resource verdicts and broadening verdicts with the reference
#      (scripts/e2e/reference.js: fullDiff on the CLI's templates), and each review's outcome with
#      what the change deserves (block or pass);
#   4. in a network namespace that has only loopback (so no AWS endpoint or anything else can be
#      reached), starts moto (internal/testutil/moto/launcher.py, the project's launcher: it closes
#      the emulator gaps these apps meet), bootstraps it with the real bootstrap template and deploys
#      main, then release, then blocked (release + a change the review blocked, which must fail),
#      with `cdkbot deploy` and, on a reset emulator, with `cdk deploy`; a recording fake `docker`
#      stands in for the engine; the end states (stacks, resources, outputs) are compared.
# Goals: next PR ≤ 0.3 × the CDK CLI path, cold first review ≤ 0.7 ×. Prints a table at the end.
# Must run as root (the synthesis users); needs node, python with moto 5, the npm registry.
# Usage: scripts/e2e/run.sh   (RUNS=1 timed runs of reviews and CLI path; KEEP=1 keeps the work dir)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=changes.sh
. "$here/changes.sh"
apps=(api platform)
now() { date +%s%N; }
ms() { echo $(( ($(now) - $1) / 1000000 )); }
git_commit() { git -c user.name=e2e -c user.email=e2e@example.com -c commit.gpgsign=false commit -qm "$1"; }

# bootstrap_moto URL: the real CDK bootstrap template deployed as CDKToolkit on a reset emulator.
bootstrap_moto() {
  curl -sf -X POST "$1/moto-api/reset" >/dev/null
  "$py" - "$root/internal/testutil/moto/bootstrap-template.yaml" <<'PY'
import sys, time, boto3
cfn = boto3.client("cloudformation")
cfn.create_stack(StackName="CDKToolkit", TemplateBody=open(sys.argv[1]).read(), Capabilities=["CAPABILITY_NAMED_IAM"])
while cfn.describe_stacks(StackName="CDKToolkit")["Stacks"][0]["StackStatus"] != "CREATE_COMPLETE":
    time.sleep(0.2)
PY
}

# end_state FILE: every stack but the toolkit: status, resources (logical id, type, status), outputs.
end_state() {
  "$py" - "$1" <<'PY'
import json, sys, boto3
cfn = boto3.client("cloudformation")
out = {}
for s in cfn.describe_stacks()["Stacks"]:
    if s["StackName"] == "CDKToolkit":
        continue
    res = cfn.describe_stack_resources(StackName=s["StackName"])["StackResources"]
    out[s["StackName"]] = {
        "status": s["StackStatus"],
        "resources": sorted(f'{r.get("LogicalResourceId", "?")} {r.get("ResourceType", "?")} {r.get("ResourceStatus", "?")}' for r in res),
        "outputs": {o["OutputKey"]: o["OutputValue"] for o in s.get("Outputs", [])},
    }
json.dump(out, open(sys.argv[1], "w"), indent=1, sort_keys=True)
PY
}

# deploy_phase: runs inside `unshare -n` (loopback only), started by the main flow below.
deploy_phase() {
  ip link set lo up
  if curl -s -m 3 -o /dev/null https://registry.npmjs.org/; then echo "the deploy phase can reach the internet" >&2; exit 1; fi
  echo "deploy phase: network namespace with loopback only (the npm registry is unreachable from here)" >"$tmp/deploy-network"
  local port url moto_pid tool app rc start
  port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$py" "$root/internal/testutil/moto/launcher.py" -H 127.0.0.1 -p "$port" >"$tmp/moto.log" 2>&1 &
  moto_pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/moto-api/" >/dev/null && break; sleep 0.1; done
  url="http://127.0.0.1:$port"
  # "localhost": moto reads a TemplateURL on the endpoint itself only by that name.
  export AWS_ENDPOINT_URL="http://localhost:$port" AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
    AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true NODE_NO_WARNINGS=1 \
    CDK_DISABLE_VERSION_CHECK=1 PATH="$tmp/fakebin:$PATH"
  for tool in cdkbot cdk; do
    bootstrap_moto "$url"
    for step in main release blocked; do
      for app in "${apps[@]}"; do
        local asm="$tmp/cli/$app/$step/cdk.out"
        [ -d "$asm" ] || continue
        start=$(now)
        set +e
        if [ "$tool" = cdkbot ]; then
          "$tmp/cdkbot" deploy "$asm" --concurrency 4 --revision "$step" >"$tmp/deploy.$tool.$app.$step.log" 2>&1
        else
          (cd "$tmp/cli/$app/$step" && "$cdk" deploy --app cdk.out --all --require-approval never --concurrency 4 \
            --no-notices --progress events >"$tmp/deploy.$tool.$app.$step.log" 2>&1)
        fi
        rc=$?
        set -e
        echo "deploy.$tool.$app.$step $(ms "$start") $rc" >>"$tmp/deploys"
      done
    done
    end_state "$tmp/state.$tool.json"
  done
  kill "$moto_pid"
}

if [ "${1:-}" = --deploy-phase ]; then
  deploy_phase
  exit 0
fi

[ "$(id -u)" = 0 ] || { echo "run as root: cdkbot synthesizes as two unprivileged users, as the action does" >&2; exit 2; }
total_start=$(now)
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
export tmp here root
export CDK_DISABLE_CLI_TELEMETRY=true CDK_DISABLE_VERSION_CHECK=1
# Reviews and the CLI path run with no AWS credentials at all: nothing can reach AWS.
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL AWS_REGION AWS_DEFAULT_REGION

echo "installing the CDK CLI aws-cdk 2.1148.1 and @aws-cdk/cloudformation-diff 2.187.5 …" >&2
mkdir -p "$tmp/tools" && (cd "$tmp/tools" && echo '{"private":true}' >package.json &&
  npm install --no-audit --no-fund --loglevel=error aws-cdk@2.1148.1 @aws-cdk/cloudformation-diff@2.187.5 \
    @aws-cdk/aws-service-spec@0.1.216 >/dev/null)
cdk="$tmp/tools/node_modules/.bin/cdk"
export cdk
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/cdkbot" ./cmd/cdkbot)
py=$(bash "$root/scripts/moto-server.sh")
export py
mkdir -p "$tmp/fakebin"
# The recording fake of internal/testutil/fakedocker: there is no docker engine here.
printf '#!/bin/sh\nin=$(cat | wc -c)\nprintf "%%s|stdin=%%s\\n" "$*" "$in" >>%s/docker-calls.log\n' "$tmp" >"$tmp/fakebin/docker"
chmod 755 "$tmp/fakebin/docker"

# The repositories: main, a branch per change, release (main + the changes that merge).
for app in "${apps[@]}"; do
  repo="$tmp/repos/$app"
  mkdir -p "$repo" && cp -r "$here/apps/$app/." "$repo/"
  (
    cd "$repo"
    printf 'node_modules/\ncdk.out/\n' >.gitignore
    git init -q -b main && git add -A && git_commit "the $app app"
    merges=()
    for c in "${CHANGES[@]}"; do
      read -r a br expect merge <<<"${c%%|*}"
      [ "$a" = "$app" ] || continue
      git checkout -q -b "$br" main
      "change_$br"
      git add -A && git_commit "${c#*|}"
      [ "$merge" = merge ] && merges+=("$br")
    done
    git checkout -q -b release main
    for br in "${merges[@]}"; do git -c user.name=e2e -c user.email=e2e@example.com merge -q --no-edit "$br"; done
    read -r a br <<<"$BLOCKED_DEPLOY"
    if [ "$a" = "$app" ]; then
      git checkout -q -b blocked release
      git -c user.name=e2e -c user.email=e2e@example.com merge -q --no-edit "$br"
    fi
    git checkout -q main
  )
done
echo "repositories: $(for a in "${apps[@]}"; do echo -n "$a ($(git -C "$tmp/repos/$a" branch | wc -l) branches) "; done)" >&2

: >"$tmp/times"
: >"$tmp/verdicts"
: >"$tmp/deploys"
mkdir -p "$tmp/out"
# review APP BRANCH EXPECTATION MODE RUN: cdkbot review, as a user runs it, timed.
review() {
  local app=$1 br=$2 expect=$3 m=$4 run=$5 start rc
  echo "review $app $br ($m) …" >&2
  start=$(now)
  set +e
  "$tmp/cdkbot" review --repo "$tmp/repos/$app" --base main --head "$br" --format json --deployed off \
    --synth-user 62601,62602 >"$tmp/out/$app.$br.$m.json" 2>"$tmp/out/$app.$br.$m.log"
  rc=$?
  set -e
  echo "review.$app.$br.$m $(ms "$start")" >>"$tmp/times"
  [ "$run" = 1 ] && [ "$m" != warm ] && echo "$app $br $expect $rc $m" >>"$tmp/verdicts"
  if [ "$run" = 1 ] && [ "$m" = next ] && [ "${br%-docs}" != "$br" ] && [ "$(grep -c "reused the assembly" "$tmp/out/$app.$br.$m.log")" -lt 2 ]; then
    echo "finding: the docs-only change $app $br (README.md beside cdk.json, as cdk init and aws-cdk-examples lay an app out) was synthesized again, not reused: $(ms "$start") ms" >>"$tmp/findings"
  fi
  if [ "$m" = warm ] && ! grep -q "reused the assembly" "$tmp/out/$app.$br.$m.log"; then
    echo "finding: the repeated review of $app $br did not reuse its assemblies" >>"$tmp/findings"
  fi
}

# cli_path APP REV RUN: the CDK CLI path for one revision: npm ci + cdk synth, timed, and for a pull
# request cdk diff --template of each stack whose template differs from main's; then the reference.
cli_path() {
  local app=$1 rev=$2 run=$3 w="$tmp/cli/$1" start t stack old review
  echo "CDK CLI path $app $rev …" >&2
  rm -rf "${w:?}/$rev" && mkdir -p "$w/$rev"
  git -C "$tmp/repos/$app" archive "$rev" | tar -x -C "$w/$rev"
  if [ "$rev" = release ] || [ "$rev" = blocked ]; then
    # Deployed, not timed: the dependencies of main (the same lock files), hard-linked.
    (cd "$w/main" && find . -name node_modules -prune -type d) | while read -r nm; do cp -al "$w/main/$nm" "$w/$rev/$nm"; done
  else
    start=$(now)
    (cd "$w/$rev" && npm ci --no-audit --no-fund --loglevel=error >"$w/$rev.install.log" 2>&1) ||
      { echo "npm ci failed for $app $rev:" >&2; tail -20 "$w/$rev.install.log" >&2; exit 1; }
    echo "cli.$app.$rev.install $(ms "$start")" >>"$tmp/times"
  fi
  start=$(now)
  (cd "$w/$rev" && "$cdk" synth -q --no-notices >/dev/null 2>"$w/$rev.synth.log") ||
    { echo "cdk synth failed for $app $rev:" >&2; tail -20 "$w/$rev.synth.log" >&2; exit 1; }
  echo "cli.$app.$rev.synth $(ms "$start")" >>"$tmp/times"
  case $rev in main | release | blocked) return ;; esac
  start=$(now)
  for t in "$w/$rev"/cdk.out/*.template.json; do
    stack=$(basename "$t" .template.json)
    old="$w/main/cdk.out/$stack.template.json"
    [ -f "$old" ] || { echo '{}' >"$w/$rev.empty.json"; old="$w/$rev.empty.json"; }
    cmp -s "$old" "$t" && continue
    (cd "$w/$rev" && "$cdk" diff --no-notices --exclusively --app cdk.out --template "$old" "$stack" >>"$w/$rev.diff.txt" 2>&1 || true)
  done
  echo "cli.$app.$rev.diff $(ms "$start")" >>"$tmp/times"
  if [ "$run" = 1 ]; then
    for review in "$tmp/out/$app.$rev".{cold,next}.json; do [ -f "$review" ] && break; done
    NODE_PATH="$tmp/tools/node_modules" node "$here/reference.js" "$w/main/cdk.out" "$w/$rev/cdk.out" "$review" \
      >"$tmp/out/$app.$rev.agreement.json"
  fi
}

# Each pull request's review and its CLI path run one right after the other, so that the load of a
# shared machine weighs on both alike.
for run in $(seq "${RUNS:-1}"); do
  for app in "${apps[@]}"; do
    export XDG_CACHE_HOME="$tmp/cache-$app-$run"
    mkdir -p "$XDG_CACHE_HOME" && chmod 711 "$XDG_CACHE_HOME"
    cli_path "$app" main "$run"
    n=0
    for c in "${CHANGES[@]}"; do
      read -r a br expect merge <<<"${c%%|*}"
      [ "$a" = "$app" ] || continue
      n=$((n + 1))
      if [ $n = 1 ]; then review "$app" "$br" "$expect" cold "$run"; else review "$app" "$br" "$expect" next "$run"; fi
      [ $n = 2 ] && review "$app" "$br" "$expect" warm "$run"
      cli_path "$app" "$br" "$run"
    done
    if [ "$run" = 1 ]; then
      cli_path "$app" release "$run"
      git -C "$tmp/repos/$app" rev-parse -q --verify blocked >/dev/null && cli_path "$app" blocked "$run"
    fi
  done
done

# 3. Deploy on the emulator, cdkbot and cdk deploy, in a namespace with loopback only.
echo "deploying main then release on moto, with cdkbot deploy and with cdk deploy …" >&2
unshare -n "$0" --deploy-phase

"$py" - "$tmp" "$(ms "$total_start")" "${RUNS:-1}" <<'PY'
import collections, glob, json, os, statistics, sys
tmp, total_ms, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t = collections.defaultdict(list)
for line in open(f"{tmp}/times"):
    k, v = line.split()
    t[k].append(int(v) / 1000)
med = lambda k: statistics.median(t[k])
apps = ["api", "platform"]
verdicts = [l.split() for l in open(f"{tmp}/verdicts")]
findings = open(f"{tmp}/findings").read().splitlines() if os.path.exists(f"{tmp}/findings") else []

print()
print("=" * 100)
print(f"cdkbot end to end — two apps, {len(verdicts)} pull requests, {runs} timed run(s) (median)")
print("=" * 100)
print("\n1. Reviews: cdkbot review --repo R --base main --head B vs the CDK CLI path (npm ci + synth base and head + diff)")
print(f"  {'app':<9} {'pull request':<18} {'mode':<5} {'cdkbot':>8} {'CLI path':>9} {'ratio':>7}  {'goal':<8} outcome (expected)      gates")
ratios = collections.defaultdict(list)
for app in apps:
    base = med(f"cli.{app}.main.install") + med(f"cli.{app}.main.synth")
    for a, br, expect, rc, mode in verdicts:
        if a != app:
            continue
        cli = base + med(f"cli.{app}.{br}.install") + med(f"cli.{app}.{br}.synth") + med(f"cli.{app}.{br}.diff")
        for m in [mode] + (["warm"] if f"review.{app}.{br}.warm" in t else []):
            ours = med(f"review.{app}.{br}.{m}")
            r = ours / cli
            ratios[m].append(r)
            goal = {"cold": "≤ 0.7×", "next": "≤ 0.3×"}.get(m, "")
            ok = "" if not goal else ("ok" if r <= float(goal[2:-1]) else "MISSED")
            rep = json.load(open(f"{tmp}/out/{app}.{br}.{m}.json")) if os.path.getsize(f"{tmp}/out/{app}.{br}.{m}.json") else {}
            gates = ",".join(g["name"] for g in rep.get("gates", []) if g.get("triggered") and g.get("enforced"))
            outcome = {"0": "pass", "1": "block"}.get(rc, f"exit {rc}") if m != "warm" else ""
            exp = f"({expect})" if m != "warm" else ""
            print(f"  {app:<9} {br:<18} {m:<5} {ours:7.2f}s {cli:8.2f}s {r:6.3f}×  {goal:<6} {ok:<6} {outcome:<6} {exp:<9} {gates}")
print(f"  CLI path base side per app (npm ci + cdk synth at main, counted in each row): " +
      ", ".join(f"{a} {med(f'cli.{a}.main.install'):.1f}+{med(f'cli.{a}.main.synth'):.1f}s" for a in apps))
for m, goal in [("cold", 0.7), ("next", 0.3), ("warm", None)]:
    if ratios[m]:
        xs = ratios[m]
        g = f"  goal ≤ {goal}×: {'met' if max(xs) <= goal else 'MISSED'} (worst)" if goal else ""
        print(f"  {m:<5} ratio: median {statistics.median(xs):.3f}×, worst {max(xs):.3f}× over {len(xs)}{g}")

print("\n2. Verdicts")
wrong = [(a, br, e, rc) for a, br, e, rc, m in verdicts if {"pass": "0", "block": "1"}[e] != rc]
print(f"  outcomes: {len(verdicts) - len(wrong)}/{len(verdicts)} as expected (dangerous blocked, harmless passed)")
for a, br, e, rc in wrong:
    print(f"    {a} {br}: expected {e}, got exit {rc}; the review said:")
    for m in ("cold", "next"):
        f = f"{tmp}/out/{a}.{br}.{m}"
        if os.path.exists(f + ".log"):
            lines = [l for l in open(f + ".log").read().splitlines() if l.startswith("cdkbot")]
            for l in lines[-6:]:
                print(f"      {l[:200]}")
agree = total = bagree = btotal = 0
dis, bdis, prop = [], [], []
for f in sorted(glob.glob(f"{tmp}/out/*.agreement.json")):
    name = os.path.basename(f)[: -len(".agreement.json")]
    r = json.load(open(f))
    agree += r["resources"]["agree"]; total += r["resources"]["total"]
    bagree += r["broadening"]["agree"]; btotal += r["broadening"]["total"]
    dis += [f"{name}: {d}" for d in r["resources"]["disagreements"]]
    bdis += [f"{name}: {d}" for d in r["broadening"]["disagreements"]]
    prop += [f"{name}: {d}" for d in r["propagated"]]
print(f"  per-resource verdicts agreeing with @aws-cdk/cloudformation-diff: {agree}/{total}")
for d in dis:
    print(f"    disagreement {d}")
print(f"  broadening verdicts (per changed stack) agreeing: {bagree}/{btotal}")
for d in bdis:
    print(f"    disagreement {d}")
print(f"  consequences cdkbot adds that the reference cannot see (template entry unchanged): {len(prop)}")
for d in prop:
    print(f"    {d}")

print("\n3. Deploy on moto (main, then release = main + the merged changes, then blocked = release + a change the")
print("   review blocked, which both deploys must fail; the end state is read after the last step)")
print(open(f"{tmp}/deploy-network").read().strip() if os.path.exists(f"{tmp}/deploy-network") else "  (the deploy phase did not run)")
d = {}
for line in open(f"{tmp}/deploys"):
    k, v, rc = line.split()
    d[k] = (int(v) / 1000, rc)
print(f"  {'app':<9} {'step':<8} {'cdkbot deploy':>14} {'cdk deploy':>11} {'cdk/cdkbot':>11}")
for app in apps:
    for step in ["main", "release", "blocked"]:
        a, b = d.get(f"deploy.cdkbot.{app}.{step}"), d.get(f"deploy.cdk.{app}.{step}")
        if not a or not b:
            continue
        fa = f"{a[0]:.2f}s" + ("" if a[1] == "0" else f" exit {a[1]}")
        fb = f"{b[0]:.2f}s" + ("" if b[1] == "0" else f" exit {b[1]}")
        print(f"  {app:<9} {step:<8} {fa:>14} {fb:>11} {b[0] / a[0]:10.1f}×")
        if step == "blocked":
            for tool in ("cdkbot", "cdk"):
                lines = open(f"{tmp}/deploy.{tool}.{app}.{step}.log").read().splitlines()
                why = [l.strip() for l in lines if "in use" in l] or [l.strip() for l in lines if "failed" in l.lower()]
                print(f"    {tool}: {why[-1].removeprefix('cdkbot: ')[:160] if why else '(no failure reported)'}")
try:
    s1, s2 = json.load(open(f"{tmp}/state.cdkbot.json")), json.load(open(f"{tmp}/state.cdk.json"))
    same = [k for k in s1 if s1.get(k) and s2.get(k) and s1[k]["status"] == s2[k]["status"] and s1[k]["resources"] == s2[k]["resources"] and sorted(s1[k]["outputs"]) == sorted(s2[k]["outputs"])]
    allk = sorted(set(s1) | set(s2))
    nres = sum(len(v["resources"]) for v in s1.values())
    print(f"  end state: {len(same)}/{len(allk)} stacks the same (status, {nres} resources by id/type/status, output names)")
    for k in allk:
        if k not in same:
            a, b = s1.get(k), s2.get(k)
            print(f"    {k}: cdkbot {a and a['status']} ({a and len(a['resources'])} resources, outputs {a and sorted(a['outputs'])}); "
                  f"cdk {b and b['status']} ({b and len(b['resources'])} resources, outputs {b and sorted(b['outputs'])})")
            if a and b:
                for r in sorted(set(a["resources"]) ^ set(b["resources"])):
                    print(f"      {'cdkbot' if r in a['resources'] else 'cdk'} only: {r}")
except FileNotFoundError as e:
    print(f"  end state missing: {e}")
calls = open(f"{tmp}/docker-calls.log").read().splitlines() if os.path.exists(f"{tmp}/docker-calls.log") else []
print(f"  fake docker calls (both tools): {len(calls)} ({', '.join(sorted(set(c.split()[0] for c in calls)))})")

print("\n4. Findings")
for f in findings:
    print(f"  {f}")
if not findings and not wrong and not dis:
    print("  none")
print(f"\ntotal wall time: {total_ms / 1000:.0f} s")
PY
