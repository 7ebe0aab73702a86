package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

// gitRun runs git in dir with a fixed identity and returns its trimmed output.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commitAssembly writes cdk.out with one stack holding resources, and commits it.
func commitAssembly(t *testing.T, dir, message string, resources ...string) string {
	t.Helper()
	out := filepath.Join(dir, "cdk.out")
	os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	all := map[string]any{
		"Bucket": map[string]any{"Type": "AWS::S3::Bucket"},
		"Table": map[string]any{"Type": "AWS::DynamoDB::Table", "Properties": map[string]any{"KeySchema": []any{map[string]any{"AttributeName": "id", "KeyType": "HASH"}},
			"AttributeDefinitions": []any{map[string]any{"AttributeName": "id", "AttributeType": "S"}}, "BillingMode": "PAY_PER_REQUEST"}},
		"Queue": map[string]any{"Type": "AWS::SQS::Queue"},
	}
	res := map[string]any{}
	for _, r := range resources {
		res[r] = all[r]
	}
	writeJSONFile(t, filepath.Join(out, "manifest.json"), map[string]any{"version": "36.0.0", "artifacts": map[string]any{
		"Data": map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"templateFile": "Data.template.json"}}}})
	writeJSONFile(t, filepath.Join(out, "Data.template.json"), map[string]any{"Resources": res})
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", message)
	return gitRun(t, dir, "rev-parse", "HEAD")
}

// The PR's branch adds a queue; meanwhile main gained a table. Reviewing the head against the
// base branch's tip would show the table destroyed (a stateful resource: blocked). cdkbot reviews
// GitHub's test merge commit against its first parent: only the queue is added. Without a merge
// commit it compares the head with the merge base, and says so.
func TestActionReviewsTheTestMergeCommit(t *testing.T) {
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	branchPoint := commitAssembly(t, dir, "bucket", "Bucket")
	gitRun(t, dir, "checkout", "-q", "-b", "topic")
	head := commitAssembly(t, dir, "add a queue", "Bucket", "Queue")
	gitRun(t, dir, "checkout", "-q", "main")
	mainTip := commitAssembly(t, dir, "add a table", "Bucket", "Table")
	// GitHub's refs/pull/42/merge: main's tip merged with the head.
	gitRun(t, dir, "checkout", "-q", "--detach", mainTip)
	gitRun(t, dir, "merge", "-q", "--no-ff", "--no-commit", "-s", "ours", head)
	merge := commitAssembly(t, dir, "Merge "+head+" into "+mainTip, "Bucket", "Table", "Queue")

	srv := ghserver.New(t, actionToken)
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "synchronize", head, mainTip))
	t.Setenv("INPUT_WORKING-DIRECTORY", dir)
	t.Setenv("INPUT_BASE-ASSEMBLY", "")
	t.Setenv("INPUT_HEAD-ASSEMBLY", "")
	// The head is synthesized, never read from git: this app's synthesis is its cdk.out.
	t.Setenv("INPUT_SYNTH-COMMAND", `cp -R cdk.out/. "$CDK_OUTDIR"`)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("GITHUB_SHA", merge)
	code, stdout, stderr := run(t, "action")
	body := srv.Body(42)
	if code != ExitOK || strings.Contains(body, "Table") || !strings.Contains(body, "Queue") {
		t.Fatalf("exit %d\n%s\n%s\ncomment:\n%s", code, stdout, stderr, body)
	}
	m, ok := render.ParseMarker(body)
	if !ok || m.HeadSHA != head || m.BaseSHA != mainTip || m.MergeSHA != merge {
		t.Errorf("marker %+v, want head %s base %s merge %s", m, head, mainTip, merge)
	}

	// No test merge commit (the checkout is the head itself): the merge base, and a note.
	t.Setenv("GITHUB_SHA", head)
	code, stdout, _ = run(t, "action")
	body = srv.Body(42)
	if code != ExitOK || strings.Contains(body, "Table") || !strings.Contains(body, "There is no test merge commit") {
		t.Fatalf("exit %d\n%s\ncomment:\n%s", code, stdout, body)
	}
	if m, _ := render.ParseMarker(body); m.BaseSHA != branchPoint || m.MergeSHA != "" {
		t.Errorf("marker %+v, want base %s (the merge base)", m, branchPoint)
	}
}
