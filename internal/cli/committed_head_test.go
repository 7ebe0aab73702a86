package cli

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
)

// copyApp is an app without node or npm: its "synthesis" copies the assembly it keeps in app/,
// so a test decides what the app makes independently of the cdk.out committed beside it.
const copyApp = `cp -R app/. "$CDK_OUTDIR"`

// assemblyFiles is an assembly of one stack, Data, holding resources, as files under dir.
func assemblyFiles(t *testing.T, dir string, resources ...string) map[string]string {
	t.Helper()
	all := map[string]any{
		"Bucket": map[string]any{"Type": "AWS::S3::Bucket"},
		"Table": map[string]any{"Type": "AWS::DynamoDB::Table", "Properties": map[string]any{
			"KeySchema":            []any{map[string]any{"AttributeName": "id", "KeyType": "HASH"}},
			"AttributeDefinitions": []any{map[string]any{"AttributeName": "id", "AttributeType": "S"}},
			"BillingMode":          "PAY_PER_REQUEST"}},
	}
	res := map[string]any{}
	for _, r := range resources {
		res[r] = all[r]
	}
	manifest, err := json.Marshal(map[string]any{"version": "36.0.0", "artifacts": map[string]any{
		"Data": map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"templateFile": "Data.template.json"}}}})
	if err != nil {
		t.Fatal(err)
	}
	template, err := json.Marshal(map[string]any{"Resources": res})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{path.Join(dir, "manifest.json"): string(manifest),
		path.Join(dir, "Data.template.json"): string(template)}
}

// lyingHead makes a repository whose base has a bucket and a table, both in its app and in its
// committed cdk.out, and whose head deletes the table from the app while its committed cdk.out
// still has it: the committed assembly claims no changes, the app destroys the table.
func lyingHead(t *testing.T) (dir, base, head string) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir = t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	files := assemblyFiles(t, "cdk.out", "Bucket", "Table")
	for k, v := range assemblyFiles(t, "app", "Bucket", "Table") {
		files[k] = v
	}
	base = gitcli.Commit(t, dir, "bucket and table", files)
	gitRun(t, dir, "checkout", "-q", "-b", "topic")
	gitRun(t, dir, "rm", "-q", "-r", "app")
	head = gitcli.Commit(t, dir, "drop the table (cdk.out left as it was)", assemblyFiles(t, "app", "Bucket"))
	return dir, base, head
}

func lastCheckRun(t *testing.T, srv *ghserver.Server, sha string) *ghserver.CheckRun {
	t.Helper()
	var last *ghserver.CheckRun
	for _, cr := range srv.CheckRuns {
		if cr.HeadSHA == sha {
			last = cr
		}
	}
	if last == nil {
		t.Fatalf("no check run on %s: %+v", sha, srv.CheckRuns)
	}
	return last
}

// The action reviews what the head's app makes, never the cdk.out committed in it: a pull
// request (and a merge queue entry) whose committed assembly claims "no changes" while its app
// deletes a table shows the deletion and fails the check.
func TestActionSynthesizesTheHeadNotItsCommittedAssembly(t *testing.T) {
	dir, base, head := lyingHead(t)
	srv := ghserver.New(t, actionToken)
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "synchronize", head, base))
	t.Setenv("INPUT_WORKING-DIRECTORY", dir)
	t.Setenv("INPUT_BASE-ASSEMBLY", "")
	t.Setenv("INPUT_HEAD-ASSEMBLY", "")
	t.Setenv("INPUT_SYNTH-COMMAND", copyApp)
	t.Setenv("GITHUB_SHA", head)
	code, stdout, stderr := run(t, "action")
	body := srv.Body(42)
	if code != ExitVerdict || !strings.Contains(body, "**destroy** <code>Table</code>") || strings.Contains(body, "no changes") ||
		!strings.Contains(body, "Blocked by `destroy-stateful`") {
		t.Fatalf("exit %d\n%s\n%s\ncomment:\n%s", code, stdout, stderr, body)
	}
	if cr := lastCheckRun(t, srv, head); cr.Conclusion != "failure" {
		t.Errorf("check run %+v, want failure", cr)
	}
	if m, _ := render.ParseMarker(body); m.HeadAssembly != "" {
		t.Errorf("marker says the head was %q; cdkbot synthesized it", m.HeadAssembly)
	}
	if strings.Contains(stdout, "used the committed") || !strings.Contains(stdout, "synthesizing with") {
		t.Errorf("the head was not synthesized:\n%s", stdout)
	}

	// The merge queue: the queue's head is synthesized too.
	actionEnv(t, srv, actionToken, "merge_group", realEvent(t, "merge_group", "checks_requested", func(p map[string]any) {
		set(p, "merge_group.head_sha", head)
		set(p, "merge_group.base_sha", base)
		set(p, "merge_group.head_ref", "refs/heads/gh-readonly-queue/main/topic")
	}))
	t.Setenv("INPUT_WORKING-DIRECTORY", dir)
	t.Setenv("INPUT_BASE-ASSEMBLY", "")
	t.Setenv("INPUT_HEAD-ASSEMBLY", "")
	t.Setenv("INPUT_SYNTH-COMMAND", copyApp)
	code, stdout, stderr = run(t, "action")
	if cr := lastCheckRun(t, srv, head); code != ExitVerdict || cr.Conclusion != "failure" ||
		!strings.Contains(cr.Title, "1 destroy") {
		t.Fatalf("merge_group: exit %d, check run %+v\n%s\n%s", code, cr, stdout, stderr)
	}
}

// pull_request_target never runs pull request code, and no longer takes the head's committed
// assembly in its place: without head-assembly it refuses, saying what to pass.
func TestActionPullRequestTargetRefusesACommittedHead(t *testing.T) {
	dir, base, head := lyingHead(t)
	srv := ghserver.New(t, actionToken)
	actionEnv(t, srv, actionToken, "pull_request_target", prEvent(t, "opened", head, base))
	t.Setenv("INPUT_WORKING-DIRECTORY", dir)
	t.Setenv("INPUT_BASE-ASSEMBLY", "")
	t.Setenv("INPUT_HEAD-ASSEMBLY", "")
	t.Setenv("INPUT_SYNTH-COMMAND", copyApp)
	code, stdout, stderr := run(t, "action")
	if code != ExitUsage || len(srv.Comments[42]) != 0 || strings.Contains(stdout, "synthesizing with") ||
		!strings.Contains(stderr, "synthesizing pull request code is not allowed here") ||
		!strings.Contains(stderr, "its committed cdk.out is never reviewed in place of synthesis") ||
		!strings.Contains(stderr, "pass head-assembly synthesized by a trusted job") {
		t.Fatalf("exit %d, comments %v\n%s\n%s", code, srv.Comments[42], stdout, stderr)
	}
}

// A head assembly given to the action is said so: the marker records it and the comment notes
// that cdkbot did not synthesize it.
func TestActionGivenHeadAssemblyIsSaidSo(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "opened", "4678020cb068", "9f2c1a0b7d4e"))
	code, stdout, _ := run(t, "action")
	body := srv.Body(42)
	if code != ExitVerdict || body == "" {
		t.Fatalf("exit %d\n%s\ncomment:\n%s", code, stdout, body)
	}
	if m, ok := render.ParseMarker(body); !ok || m.HeadAssembly != "given" {
		t.Errorf("marker %+v, want headAssembly given", m)
	}
	if !strings.Contains(body, "> [!NOTE]\n> The head assembly was given to cdkbot (head-assembly), "+
		"not synthesized by cdkbot from the change") {
		t.Errorf("no note that the head was given:\n%s", body)
	}
}

// Locally the head's committed assembly still stands in for synthesis, and the log and the
// review say so; a head without one is synthesized, and nothing is said.
func TestReviewSaysItUsedTheCommittedHead(t *testing.T) {
	dir, base, head := lyingHead(t)
	code, stdout, stderr := run(t, "review", "--repo", dir, "--base", base, "--head", head,
		"--synth-command", copyApp, "--no-color")
	short := head[:12]
	if code != ExitOK || !strings.Contains(stdout, "no changes") ||
		!strings.Contains(stderr, "cdkbot: head ("+short+"): used the committed cdk.out instead of synthesizing") ||
		!strings.Contains(stdout, "note: The head ("+short+") is the cdk.out committed in it, not synthesized by cdkbot") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	gitRun(t, dir, "rm", "-q", "-r", "cdk.out")
	gitRun(t, dir, "commit", "-q", "-m", "no assembly")
	synthesized := gitRun(t, dir, "rev-parse", "HEAD")
	code, stdout, stderr = run(t, "review", "--repo", dir, "--base", base, "--head", synthesized,
		"--synth-command", copyApp, "--no-color")
	if code != ExitVerdict || !strings.Contains(stdout, "Table") || strings.Contains(stderr, "used the committed") ||
		strings.Contains(stdout, "committed in it") {
		t.Fatalf("synthesized head: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Given with --head-assembly, the head is said to be given.
	code, stdout, stderr = run(t, "review", "--head-assembly", dir+"/app", "--no-color")
	if code != ExitOK || !strings.Contains(stdout, "note: The head assembly was given to cdkbot") {
		t.Fatalf("given head: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
