#!/usr/bin/env bash
# Side by side, in one run: how long a pull request review takes with cdkbot and with the CDK CLI
# path a team runs today, on two real apps (aws-cdk-lib 2.276.0, the CLI aws-cdk 2.1148.1):
#   deploy-graph  compat-fixtures/apps/deploy-graph.js: 12 stacks, cross-stack references, a file asset
#   lambda        a Lambda function with a code asset and a queue (the head changes the handler)
# Each app lives in infra/ of a git repository with three commits: base, head (changes the app),
# docs (changes README.md only). Timed, 3 runs each (min / median / max):
#   (a) cdkbot review --repo infra --base base --head head, cold (empty cache), as the action runs it
#       (two synthesis users, base and head side by side); also with --synth-concurrency 1
#   (b) cdkbot review --base head --head docs, warm (the cache of a run of (a))
#   (c) cdk synth at base, cdk synth at head, cdk diff of the changed stack (--template: no AWS
#       account; one stack only, so (c) is a lower bound of what the CLI path costs)
# Goals: (a) ≤ 0.6 × (c); (b) ≤ 0.1 × (c). Must run as root (the synthesis users); needs node and
# the npm registry. Usage: scripts/benchreview/run.sh  (RUNS=3 runs each; KEEP=1 keeps the work directory)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "run as root: cdkbot synthesizes as two unprivileged users, as the action does" >&2; exit 2; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
echo "installing aws-cdk-lib 2.276.0, constructs 10 and the CDK CLI aws-cdk 2.1148.1 …" >&2
(cd "$tmp" && mkdir nm && cd nm && echo '{"private":true}' >package.json &&
  npm install --no-audit --no-fund --loglevel=error aws-cdk-lib@2.276.0 constructs@10 aws-cdk@2.1148.1 >/dev/null)
chmod -R a+rX "$tmp/nm"
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/cdkbot" ./cmd/cdkbot)
cdk="$tmp/nm/node_modules/.bin/cdk"
export CDK_DISABLE_CLI_TELEMETRY=true

git_commit() { git -C "$1" -c user.name=bench -c user.email=bench@example.com -c commit.gpgsign=false commit -qam "$2" && git -C "$1" rev-parse HEAD; }

# make_repo NAME: the app in $tmp/NAME/infra, committed three times; prints "base head docs changed-stack".
make_repo() {
  local name=$1 repo="$tmp/$1" base head docs stack
  mkdir -p "$repo/infra"
  git -C "$repo" init -q -b main
  ln -s "$tmp/nm/node_modules" "$repo/infra/node_modules"
  echo '{"app": "node app.js"}' >"$repo/infra/cdk.json"
  echo "# $name" >"$repo/README.md"
  case $name in
  deploy-graph)
    cp "$root/compat-fixtures/apps/cdk.js" "$root/compat-fixtures/apps/deploy-graph.js" "$repo/infra/"
    mv "$repo/infra/deploy-graph.js" "$repo/infra/app.js"
    mkdir -p "$repo/infra/assets" && cp -r "$root/compat-fixtures/apps/assets/config" "$repo/infra/assets/"
    stack=Web change=Extra ;;
  lambda)
    mkdir -p "$repo/infra/handler"
    echo 'exports.handler = async () => ({ statusCode: 200, body: "v1" });' >"$repo/infra/handler/index.js"
    cat >"$repo/infra/app.js" <<'JS'
const path = require('path');
const lib = require('aws-cdk-lib');
const app = new lib.App();
const env = { account: '123456789012', region: 'us-east-1' };
const fn = new lib.Stack(app, 'Fn', { env });
const queue = new lib.aws_sqs.Queue(new lib.Stack(app, 'Queue', { env }), 'Jobs');
new lib.aws_lambda.Function(fn, 'Handler', { runtime: lib.aws_lambda.Runtime.NODEJS_22_X, handler: 'index.handler',
  code: lib.aws_lambda.Code.fromAsset(path.join(__dirname, 'handler')), environment: { QUEUE: 'jobs' } });
app.synth();
JS
    stack=Fn change=Handler ;;
  esac
  git -C "$repo" add -A
  base=$(git_commit "$repo" base)
  case $name in
  deploy-graph) sed -i "s|^app.synth();|new core.CfnResource(stacks.Web, 'Extra', { type: 'AWS::SNS::Topic' });\napp.synth();|" "$repo/infra/app.js" ;;
  lambda) echo 'exports.handler = async () => ({ statusCode: 200, body: "v2" });' >"$repo/infra/handler/index.js" ;;
  esac
  head=$(git_commit "$repo" head)
  echo "more words" >>"$repo/README.md"
  docs=$(git_commit "$repo" docs)
  echo "$base $head $docs $stack $change"
}

# timed NAME CMD...: appends "NAME seconds" to $tmp/times (the command's output goes to $tmp/NAME.log).
timed() {
  local name=$1 start end
  shift
  start=$(date +%s%N)
  "$@" >"$tmp/$name.log" 2>&1 || [ $? = 1 ] || { echo "$name failed:" >&2; tail -20 "$tmp/$name.log" >&2; exit 1; }
  end=$(date +%s%N)
  echo "$name $(((end - start) / 1000000))" >>"$tmp/times"
}

cli_path() { # the CDK CLI path: synth base, synth head, diff the changed stack
  local repo=$1 base=$2 head=$3 stack=$4 w="$tmp/cli-$RANDOM"
  mkdir -p "$w/base" "$w/head"
  git -C "$repo" archive "$base" infra | tar -x -C "$w/base"
  git -C "$repo" archive "$head" infra | tar -x -C "$w/head"
  local start end
  start=$(date +%s%N)
  (cd "$w/base/infra" && "$cdk" synth -q --no-notices -o cdk.out >/dev/null 2>>"$w/synth.log")
  (cd "$w/head/infra" && "$cdk" synth -q --no-notices -o cdk.out >/dev/null 2>>"$w/synth.log")
  (cd "$w/head/infra" && "$cdk" diff --no-notices --exclusively --app cdk.out --template "$w/base/infra/cdk.out/$stack.template.json" "$stack" >"$w/diff.txt" 2>&1 || true)
  end=$(date +%s%N)
  grep -q "$6" "$w/diff.txt" || { echo "cdk diff showed no resource change:" >&2; cat "$w/diff.txt" >&2; exit 1; }
  echo "$5 $(((end - start) / 1000000))" >>"$tmp/times"
  rm -rf "$w"
}

: >"$tmp/times"
for app in deploy-graph lambda; do
  read -r base head docs stack change < <(make_repo "$app")
  echo "$app: base ${base:0:12} head ${head:0:12} docs ${docs:0:12}" >&2
  for i in $(seq "${RUNS:-3}"); do
    export XDG_CACHE_HOME="$tmp/cache-$app-$i"
    mkdir -p "$XDG_CACHE_HOME" && chmod 711 "$XDG_CACHE_HOME"
    review=("$tmp/cdkbot" review --repo "$tmp/$app/infra" --no-color --synth-user 61004,61005)
    timed "$app.cold" "${review[@]}" --base "$base" --head "$head"
    grep -q "$change" "$tmp/$app.cold.log" || { echo "the review does not show the change ($change):" >&2; cat "$tmp/$app.cold.log" >&2; exit 1; }
    timed "$app.warm" "${review[@]}" --base "$head" --head "$docs"
    grep -q "reused the assembly" "$tmp/$app.warm.log" || { echo "warm run did not reuse:" >&2; cat "$tmp/$app.warm.log" >&2; exit 1; }
    export XDG_CACHE_HOME="$tmp/cache-$app-$i-seq"
    mkdir -p "$XDG_CACHE_HOME" && chmod 711 "$XDG_CACHE_HOME"
    timed "$app.cold-sequential" "${review[@]}" --base "$base" --head "$head" --synth-concurrency 1
    cli_path "$tmp/$app" "$base" "$head" "$stack" "$app.cli" "$change"
  done
done

python3 - "$tmp/times" <<'PY'
import collections, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, ms = line.split()
    t[name].append(int(ms) / 1000)
def s(name):
    xs = sorted(t[name])
    return xs[0], statistics.median(xs), xs[-1]
def f(name):
    lo, med, hi = s(name)
    return f"{lo:6.2f} / {med:6.2f} / {hi:6.2f} s"
for app in ["deploy-graph", "lambda"]:
    cli = s(app + ".cli")[1]
    print(f"{app}  (min / median / max of 3 runs)")
    print(f"  (c) CDK CLI: synth base + synth head + diff     {f(app + '.cli')}")
    for key, label, goal in [("cold", "(a) cdkbot review, cold, side by side", 0.6),
                             ("cold-sequential", "    cdkbot review, cold, one after the other", None),
                             ("warm", "(b) cdkbot review, warm, docs-only commit", 0.1)]:
        ratio = s(f"{app}.{key}")[1] / cli
        g = f"goal ≤ {goal}×" if goal else ""
        print(f"  {label:<47} {f(app + '.' + key)}   {ratio:.3f}× of (c)  {g}")
PY
