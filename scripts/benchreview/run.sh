#!/usr/bin/env bash
# Side by side, in one run: how long a pull request review takes with cdkbot and with the CDK CLI
# path a team runs today, on two real apps (aws-cdk-lib 2.276.0, the CLI aws-cdk 2.1148.1), each
# with cdk.json at the top of its repository (where `cdk init` puts it), its dependencies in
# package.json and package-lock.json, and three commits: base, head (changes the app), docs
# (changes README.md and docs/ only):
#   deploy-graph  compat-fixtures/apps/deploy-graph.js: 12 stacks, cross-stack references, a file asset
#   lambda        a Lambda function with a code asset and a queue (the head changes the handler)
# Each run does, back to back and in that order (RUNS runs; the ratios are taken run by run and
# given as min / median / max):
#   (c) the CDK CLI path: at base and at head, `npm ci` then `cdk synth`; then `cdk diff` of the
#       changed stack (--template: no AWS account; one stack only, so (c) is a lower bound)
#   (a) cdkbot review --repo REPO --base base --head head, cold (empty cache), as the action runs it
#       (two synthesis users, side by side): it installs with `npm ci` too (cached by lock file)
#   (b) cdkbot review --base head --head docs, warm (the cache of (a)): the docs-only commit
# Both sides install from the same npm cache (~/.npm, warmed first). Goals: (a) ≤ 0.6 × (c);
# (b) ≤ 0.1 × (c). Must run as root (the synthesis users); needs node, the npm registry and
# setfacl (Debian: acl).
# Usage: scripts/benchreview/run.sh  (RUNS=3; KEEP=1 keeps the work directory)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "run as root: cdkbot synthesizes as two unprivileged users, as the action does" >&2; exit 2; }
command -v setfacl >/dev/null || { echo "needs setfacl (apt-get install acl): the synthesis users share the npm cache" >&2; exit 2; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
echo "installing the CDK CLI aws-cdk 2.1148.1, and locking aws-cdk-lib 2.276.0 and constructs 10 …" >&2
(cd "$tmp" && mkdir tools && cd tools && echo '{"private":true}' >package.json &&
  npm install --no-audit --no-fund --loglevel=error aws-cdk@2.1148.1 >/dev/null)
chmod -R a+rX "$tmp/tools"
# The apps' package.json and lock file; installing them once fills the npm cache both sides use.
(cd "$tmp" && mkdir lock && cd lock &&
  echo '{"name":"app","version":"0.0.0","private":true,"dependencies":{"aws-cdk-lib":"2.276.0","constructs":"^10.0.0"}}' >package.json &&
  npm install --no-audit --no-fund --loglevel=error >/dev/null && rm -rf node_modules)
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/cdkbot" ./cmd/cdkbot)
cdk="$tmp/tools/node_modules/.bin/cdk"
export CDK_DISABLE_CLI_TELEMETRY=true CDK_DISABLE_VERSION_CHECK=1
# The synthesis users install from the same npm cache as the CLI path (read from it, like root's).
export npm_config_cache="$tmp/npm-cache"
mkdir -p "$npm_config_cache"
(cd "$tmp/lock" && npm ci --no-audit --no-fund --loglevel=error >/dev/null && rm -rf node_modules)
# Both synthesis users write to it (npm appends to its index on every install): a default ACL
# keeps what one writes writable by the other.
chmod -R a+rwX "$npm_config_cache"
setfacl -R -m o::rwX -d -m o::rwX "$npm_config_cache"

git_commit() { git -C "$1" -c user.name=bench -c user.email=bench@example.com -c commit.gpgsign=false commit -qam "$2" && git -C "$1" rev-parse HEAD; }

# make_repo NAME: the app at the top of $tmp/NAME, committed three times; prints "base head docs stack change".
make_repo() {
  local name=$1 repo="$tmp/$1" base head docs stack change
  mkdir -p "$repo/docs"
  git -C "$repo" init -q -b main
  cp "$tmp/lock/package.json" "$tmp/lock/package-lock.json" "$repo/"
  printf 'node_modules\ncdk.out\n' >"$repo/.gitignore"
  echo '{"app": "node app.js"}' >"$repo/cdk.json"
  echo "# $name" >"$repo/README.md"
  echo "how to run it" >"$repo/docs/guide.md"
  case $name in
  deploy-graph)
    cp "$root/compat-fixtures/apps/cdk.js" "$root/compat-fixtures/apps/deploy-graph.js" "$repo/"
    mv "$repo/deploy-graph.js" "$repo/app.js"
    mkdir -p "$repo/assets" && cp -r "$root/compat-fixtures/apps/assets/config" "$repo/assets/"
    stack=Web change=Extra ;;
  lambda)
    mkdir -p "$repo/handler"
    echo 'exports.handler = async () => ({ statusCode: 200, body: "v1" });' >"$repo/handler/index.js"
    cat >"$repo/app.js" <<'JS'
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
  deploy-graph) sed -i "s|^app.synth();|new core.CfnResource(stacks.Web, 'Extra', { type: 'AWS::SNS::Topic' });\napp.synth();|" "$repo/app.js" ;;
  lambda) echo 'exports.handler = async () => ({ statusCode: 200, body: "v2" });' >"$repo/handler/index.js" ;;
  esac
  head=$(git_commit "$repo" head)
  echo "more words" >>"$repo/README.md"
  echo "and more" >>"$repo/docs/guide.md"
  docs=$(git_commit "$repo" docs)
  echo "$base $head $docs $stack $change"
}

# timed NAME CMD...: appends "NAME milliseconds" to $tmp/times (the command's output goes to $tmp/NAME.log).
timed() {
  local name=$1 start end
  shift
  start=$(date +%s%N)
  "$@" >"$tmp/$name.log" 2>&1 || [ $? = 1 ] || { echo "$name failed:" >&2; tail -20 "$tmp/$name.log" >&2; exit 1; }
  end=$(date +%s%N)
  echo "$name $(((end - start) / 1000000))" >>"$tmp/times"
}

cli_path() { # the CDK CLI path: install and synth base, install and synth head, diff the changed stack
  local repo=$1 base=$2 head=$3 stack=$4 w="$tmp/cli-$RANDOM"
  mkdir -p "$w/base" "$w/head"
  git -C "$repo" archive "$base" | tar -x -C "$w/base"
  git -C "$repo" archive "$head" | tar -x -C "$w/head"
  local start end
  start=$(date +%s%N)
  for side in base head; do
    (cd "$w/$side" && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>>"$w/synth.log" &&
      "$cdk" synth -q --no-notices -o cdk.out >/dev/null 2>>"$w/synth.log")
  done
  (cd "$w/head" && "$cdk" diff --no-notices --exclusively --app cdk.out --template "$w/base/cdk.out/$stack.template.json" "$stack" >"$w/diff.txt" 2>&1 || true)
  end=$(date +%s%N)
  grep -q "$6" "$w/diff.txt" || { echo "cdk diff showed no resource change:" >&2; cat "$w/diff.txt" >&2; exit 1; }
  echo "$5 $(((end - start) / 1000000))" >>"$tmp/times"
  rm -rf "$w"
}

: >"$tmp/times"
: >"$tmp/counts"
for app in deploy-graph lambda; do
  read -r base head docs stack change < <(make_repo "$app")
  echo "$app: base ${base:0:12} head ${head:0:12} docs ${docs:0:12}" >&2
  for i in $(seq "${RUNS:-3}"); do
    cli_path "$tmp/$app" "$base" "$head" "$stack" "$app.cli" "$change"
    export XDG_CACHE_HOME="$tmp/cache-$app-$i"
    mkdir -p "$XDG_CACHE_HOME" && chmod 711 "$XDG_CACHE_HOME"
    review=("$tmp/cdkbot" review --repo "$tmp/$app" --no-color --synth-user 61004,61005)
    timed "$app.cold" "${review[@]}" --base "$base" --head "$head"
    grep -q "$change" "$tmp/$app.cold.log" || { echo "the review does not show the change ($change):" >&2; cat "$tmp/$app.cold.log" >&2; exit 1; }
    grep -q "npm ci" "$tmp/$app.cold.log" || { echo "the cold review installed nothing:" >&2; cat "$tmp/$app.cold.log" >&2; exit 1; }
    timed "$app.warm" "${review[@]}" --base "$head" --head "$docs"
    # How many sides the docs-only review synthesized (0 when both were reused).
    echo "$app.warm-synthesized $(grep -c 'synthesizing with' "$tmp/$app.warm.log" || true)" >>"$tmp/counts"
  done
done

python3 - "$tmp/times" "$tmp/counts" <<'PY'
import collections, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, ms = line.split()
    t[name].append(int(ms) / 1000)
counts = collections.defaultdict(list)
for line in open(sys.argv[2]):
    name, n = line.split()
    counts[name].append(int(n))
def mmm(xs, f):
    xs = sorted(xs)
    return " / ".join(f.format(x) for x in (xs[0], statistics.median(xs), xs[-1]))
for app in ["deploy-graph", "lambda"]:
    cli = t[app + ".cli"]
    print(f"{app}, cdk.json at the repository's top, {len(cli)} paired runs (min / median / max)")
    print(f"  (c) CDK CLI: npm ci + synth at base and head, diff    {mmm(cli, '{:6.2f}')} s")
    for key, label, goal in [("cold", "(a) cdkbot review, cold (npm ci both sides)", 0.6),
                             ("warm", "(b) cdkbot review, warm, docs-only commit", 0.1)]:
        ours = t[f"{app}.{key}"]
        ratios = [o / c for o, c in zip(ours, cli)]
        print(f"  {label:<51} {mmm(ours, '{:6.2f}')} s   ratio to (c) {mmm(ratios, '{:.3f}')}×  goal ≤ {goal}×")
    print(f"      sides the docs-only review synthesized, per run: {counts[app + '.warm-synthesized']} (0: the assembly was reused)")
PY
