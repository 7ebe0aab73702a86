package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
)

// runTB is run for tests and benchmarks alike.
func runTB(args ...string) (code int, stdout, stderr string) {
	var out, errOut strings.Builder
	code = Main(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeJSONTB(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// monorepoApps are the fixture's three apps: two languages (their cdk.json app commands), each
// with the assembly its synthesis produces committed as cdk.out.
var monorepoApps = map[string]string{
	"infra/network":        `{"app":"npx ts-node --prefer-ts-exts bin/network.ts"}`,
	"services/shop/infra":  `{"app":"python3 app.py"}`,
	"services/users/infra": `{"app":"npx ts-node bin/users.ts"}`,
}

// writeApp writes app's cdk.json and an assembly of one stack holding resources.
func writeApp(t testing.TB, repo, app string, resources ...string) {
	t.Helper()
	dir := filepath.Join(repo, filepath.FromSlash(app))
	out := filepath.Join(dir, "cdk.out")
	os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cdkJSON, ok := monorepoApps[app]
	if !ok {
		cdkJSON = `{"app":"node app.js"}`
	}
	if err := os.WriteFile(filepath.Join(dir, "cdk.json"), []byte(cdkJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	stack := strings.ReplaceAll(strings.Title(strings.ReplaceAll(app, "/", " ")), " ", "") //nolint:staticcheck // ASCII names
	res := map[string]any{}
	for _, r := range resources {
		res[r] = map[string]any{"Type": "AWS::SQS::Queue"}
	}
	writeJSONTB(t, filepath.Join(out, "manifest.json"), map[string]any{"version": "36.0.0", "artifacts": map[string]any{
		stack: map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/eu-west-1",
			"properties": map[string]any{"templateFile": stack + ".template.json"}}}})
	writeJSONTB(t, filepath.Join(out, stack+".template.json"), map[string]any{"Resources": res})
}

// monorepo is the fixture repository on main: three apps, a workspace package.json every app's
// synthesis reads, and .cdkbot.yml giving each app two environments.
func monorepo(t testing.TB) (dir, base string) {
	dir = t.TempDir()
	gitcli.Run(t, dir, "init", "-q")
	for app := range monorepoApps {
		writeApp(t, dir, app, "Queue")
	}
	for name, body := range map[string]string{
		"package.json": `{"private":true,"workspaces":["infra/*","services/*/infra"]}`,
		".cdkbot.yml":  "apps:\n  context: { stage: [dev, prod] }\n",
		"README.md":    "# platform\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitcli.Run(t, dir, "add", "-A")
	gitcli.Run(t, dir, "commit", "-q", "-m", "three apps")
	return dir, gitcli.Run(t, dir, "rev-parse", "HEAD")
}

type matrixOutput struct {
	Key    string `json:"key"`
	Count  int    `json:"count"`
	Matrix struct {
		Include []struct{ App, Dir, Environment, Context, Key, Artifact string } `json:"include"`
	} `json:"matrix"`
	Unchanged []struct{ Key string } `json:"unchanged"`
}

// fanOut runs `cdkbot apps` as the workflow's first job does and returns its matrix and the
// file the fan-in reads it from.
func fanOut(t testing.TB, repo, base, head string) (matrixOutput, string) {
	t.Helper()
	code, stdout, stderr := runTB("apps", "--repo", repo, "--base", base, "--head", head, "--key", "cdk/review",
		"--format", "github-matrix")
	var m matrixOutput
	if code != ExitOK || json.Unmarshal([]byte(stdout), &m) != nil {
		t.Fatalf("apps: exit %d\n%s\n%s", code, stdout, stderr)
	}
	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return m, plan
}

// runLeg runs one matrix leg as the workflow does: the action on pull_request with the leg's
// key input, its comment and check run off; its report file goes to RUNNER_TEMP, here the
// directory its artifact is downloaded to.
func runLeg(t testing.TB, repo, dir, key, artifact, reports string) {
	t.Helper()
	t.Setenv("INPUT_WORKING-DIRECTORY", filepath.Join(repo, filepath.FromSlash(dir)))
	t.Setenv("INPUT_KEY", key)
	t.Setenv("INPUT_COMMENT", "off")
	t.Setenv("INPUT_CHECK-NAME", "off")
	t.Setenv("RUNNER_TEMP", filepath.Join(reports, artifact))
	if err := os.MkdirAll(filepath.Join(reports, artifact), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runTB("action"); code != ExitOK {
		t.Fatalf("leg %s: exit %d\n%s\n%s", key, code, stdout, stderr)
	}
}

// synthesized reads the synthesis log: the app directories synthesized, one line per run.
func synthesized(t testing.TB, log string) map[string]int {
	raw, _ := os.ReadFile(log)
	out := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		for app := range monorepoApps {
			if strings.HasSuffix(l, "/"+app) {
				out[app]++
			}
		}
	}
	return out
}

// The monorepo end to end, through the GitHub test server: a change to one app fans out to that
// app alone (in both environments; the others are never synthesized) and fans back into ONE
// comment and ONE check run; a change to a file every app reads fans out to all six legs and
// edits the same comment; a leg that never reported blocks the combined review.
func TestMonorepoFanOutFanIn(t *testing.T) {
	repo, base := monorepo(t)
	srv := ghserver.New(t, actionToken)
	log := filepath.Join(t.TempDir(), "synth.log")

	gitcli.Run(t, repo, "checkout", "-q", "-b", "topic")
	writeApp(t, repo, "services/shop/infra", "Queue", "DeadLetters")
	gitcli.Run(t, repo, "add", "-A")
	gitcli.Run(t, repo, "commit", "-q", "-m", "shop: a dead-letter queue")
	head := gitcli.Run(t, repo, "rev-parse", "HEAD")

	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "synchronize", head, base))
	t.Setenv("INPUT_BASE-ASSEMBLY", "")
	t.Setenv("INPUT_HEAD-ASSEMBLY", "")
	t.Setenv("INPUT_FAIL-ON", "")
	t.Setenv("GITHUB_SHA", head)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("INPUT_SYNTH-COMMAND", `pwd >> '`+log+`' && cp -R cdk.out/. "$CDK_OUTDIR"`)

	m, plan := fanOut(t, repo, base, head)
	var legs []string
	for _, l := range m.Matrix.Include {
		legs = append(legs, l.Key)
	}
	if m.Count != 2 || strings.Join(legs, " ") != "cdk/review/services/shop/infra/dev cdk/review/services/shop/infra/prod" ||
		len(m.Unchanged) != 4 {
		t.Fatalf("matrix %+v", m)
	}
	reports := t.TempDir()
	for _, l := range m.Matrix.Include {
		runLeg(t, repo, l.Dir, l.Key, l.Artifact, reports)
	}
	if got := synthesized(t, log); got["services/shop/infra"] == 0 || len(got) != 1 {
		t.Errorf("synthesized %v: only the shop's app should run", got)
	}

	t.Setenv("INPUT_CHECK-NAME", "")
	t.Setenv("INPUT_COMMENT", "")
	code, stdout, stderr := run(t, "fan-in", "--plan", plan, "--reports", reports, "--post")
	if code != ExitOK {
		t.Fatalf("fan-in: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if len(srv.Comments[42]) != 1 || len(srv.CheckRuns) != 1 {
		t.Fatalf("%d comments, %d check runs: want one of each", len(srv.Comments[42]), len(srv.CheckRuns))
	}
	body := srv.Body(42)
	for _, want := range []string{`"key":"cdk/review"`, "6 app environments: 2 reviewed, 4 unchanged",
		"#### ✅ services/shop/infra · dev", "#### ✅ services/shop/infra · prod", "<code>DeadLetters</code>",
		"| ➖ | `infra/network` | `dev` | unchanged: nothing its synthesis reads changed"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}
	if os.Getenv("SHOW") != "" {
		t.Log(body)
	}
	if cr := srv.CheckRuns[0]; cr.Name != "cdkbot" || cr.HeadSHA != head || cr.Conclusion != "success" {
		t.Errorf("check run %+v", cr)
	}

	// A file every app's synthesis reads: all six legs, and the same comment edited.
	if err := os.WriteFile(filepath.Join(repo, "package.json"), []byte(`{"private":true,"workspaces":["*"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	gitcli.Run(t, repo, "commit", "-q", "-am", "workspace: every package")
	head = gitcli.Run(t, repo, "rev-parse", "HEAD")
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "synchronize", head, base))
	t.Setenv("INPUT_BASE-ASSEMBLY", "")
	t.Setenv("INPUT_HEAD-ASSEMBLY", "")
	t.Setenv("INPUT_FAIL-ON", "")
	t.Setenv("GITHUB_SHA", head)
	m, plan = fanOut(t, repo, base, head)
	if m.Count != 6 || len(m.Unchanged) != 0 {
		t.Fatalf("a shared file: matrix %+v", m)
	}
	os.Remove(log)
	reports = t.TempDir()
	for _, l := range m.Matrix.Include[1:] { // the first leg fails before it reports
		runLeg(t, repo, l.Dir, l.Key, l.Artifact, reports)
	}
	if got := synthesized(t, log); len(got) != 3 {
		t.Errorf("synthesized %v: every app should run", got)
	}
	t.Setenv("INPUT_CHECK-NAME", "")
	t.Setenv("INPUT_COMMENT", "")
	// The action's fan-in mode.
	t.Setenv("INPUT_FAN-IN-PLAN", plan)
	t.Setenv("INPUT_FAN-IN-REPORTS", reports)
	code, stdout, stderr = run(t, "action")
	if code != ExitVerdict {
		t.Fatalf("fan-in with a leg missing: exit %d, want %d\n%s\n%s", code, ExitVerdict, stdout, stderr)
	}
	if len(srv.Comments[42]) != 1 || len(srv.CheckRuns) != 2 || srv.CheckRuns[1].Conclusion != "failure" {
		t.Fatalf("%d comments, check runs %+v", len(srv.Comments[42]), srv.CheckRuns)
	}
	first := m.Matrix.Include[0]
	if body := srv.Body(42); !strings.Contains(body, "1 without a valid report") || !strings.Contains(body, "missing: no report came back") {
		t.Errorf("the comment does not say a leg is missing:\n%s", body)
	}
	if a := srv.CheckRuns[1].Annotations; len(a) != 1 || a[0]["path"] != first.Dir+"/cdk.json" {
		t.Errorf("annotations %+v", a)
	}
}
