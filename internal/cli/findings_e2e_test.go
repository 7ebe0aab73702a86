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
)

// TestFindingsEndToEnd: the app of internal/findings/testdata (a policy validation plugin, a
// property the template validator rejects, cdk-nag-like annotations, a renamed bucket) in a git
// repository, synthesized by cdkbot with the real aws-cdk-lib: the base without template
// validation, the head with it. The comment carries the app's findings, marks the new ones,
// names the move with the cdk refactor hint, and the validation-error gate blocks when it is on.
func TestFindingsEndToEnd(t *testing.T) {
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
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	app, err := os.ReadFile("../findings/testdata/app.js")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	repo, err := gitrepo.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"app.js": string(app), "cdk.json": `{"app": "node main.js"}`,
		"main.js": "process.env.CDKBOT_SIDE = require('./side.json').side;\nrequire('./app.js');\n"}
	for i, side := range []string{"base", "head"} {
		files["side.json"] = `{"side": "` + side + `"}`
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sig := object.Signature{Name: "dev", Email: "dev@example.com", When: time.Date(2026, 11, 26, 10+i, 0, 0, 0, time.UTC)}
		if _, err := repo.CommitAll(side, sig); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := run(t, "review", "--repo", dir, "--base", "HEAD~1", "--head", "HEAD", "--install-command", "none",
		"--fail-on", "validation-error", "--format", "markdown")
	if code != ExitVerdict {
		t.Fatalf("exit %d, want %d (new validation errors)\n%s\n%s", code, ExitVerdict, stdout, stderr)
	}
	if !strings.Contains(stderr, "template validation is off for this revision") {
		t.Errorf("the base was synthesized with template validation:\n%s", stderr)
	}
	for _, want := range []string{
		"2 new validation errors", "3 new app warnings", "1 likely move", "**Blocked by `validation-error`**",
		"<details><summary><b>Findings from the app</b>: 2 errors (new) · 4 warnings (3 new) · 1 info</summary>",
		"CloudFormation Validate runs on the head only",
		"<code>ArchiveDA4CB258</code> in **Data** (orphan) → <code>ArchiveV2D864CA9B</code> in **Data**",
		"likely moved to ArchiveV2D864CA9B in Data; cdk refactor keeps it",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("review lacks %q:\n%s", want, stdout)
		}
	}
}
