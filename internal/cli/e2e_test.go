package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// tinyApp is a real CDK app; v2 renames the bucket (a replacement) and adds a queue.
const tinyApp = `const cdk = require('aws-cdk-lib');
const fs = require('fs');
const v = JSON.parse(fs.readFileSync('config.json', 'utf8'));
const app = new cdk.App();
const stack = new cdk.Stack(app, 'Tiny', { env: { account: '123456789012', region: 'eu-west-1' } });
new cdk.aws_s3.Bucket(stack, 'Data', { bucketName: v.bucket });
if (v.queue) { new cdk.aws_sqs.Queue(stack, 'Jobs'); }
app.synth();
`

// TestEndToEndWithRealCDK: a git repository with a real aws-cdk-lib app, two commits, no committed
// assembly: cdkbot review synthesizes both revisions and prints the comment.
func TestEndToEndWithRealCDK(t *testing.T) {
	if testing.Short() {
		t.Skip("installs aws-cdk-lib")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	out, err := exec.Command("../../scripts/test-cdk.sh").Output()
	if err != nil {
		t.Fatalf("install aws-cdk-lib: %v", err)
	}
	t.Setenv("NODE_PATH", strings.TrimSpace(string(out)))
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // no synthesis cache from earlier runs

	dir := t.TempDir()
	repo, err := gitrepo.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"app.js": tinyApp, "cdk.json": `{"app": "node app.js", "context": {"@aws-cdk/core:newStyleStackSynthesis": true}}`}
	for i, cfg := range []string{`{"bucket": "tiny-data-v1"}`, `{"bucket": "tiny-data-v2", "queue": true}`} {
		files["config.json"] = cfg
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sig := object.Signature{Name: "dev", Email: "dev@example.com", When: time.Date(2026, 11, 21, 10+i, 0, 0, 0, time.UTC)}
		if _, err := repo.CommitAll("v"+string(rune('1'+i)), sig); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := run(t, "review", "--repo", dir, "--base", "HEAD~1", "--head", "HEAD", "--install-command", "none",
		"--fail-on", "replace", "--format", "markdown")
	if code != ExitVerdict {
		t.Fatalf("exit %d, want %d (the bucket is replaced)\n%s\n%s", code, ExitVerdict, stdout, stderr)
	}
	if !strings.Contains(stderr, `synthesizing with "node app.js"`) {
		t.Errorf("no synthesis progress on stderr:\n%s", stderr)
	}
	for _, want := range []string{"1 replacement", "Blocked by `replace`", "<code>AWS::SQS::Queue</code>", "tiny-data-v1", "tiny-data-v2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("review lacks %q", want)
		}
	}
	golden.Assert(t, "testdata/review/e2e-real-cdk.md", []byte(stdout))
}
