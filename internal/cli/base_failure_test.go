package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A base that fails to synthesize fails the review closed (exit 1, the reason named, the head
// shown alone), in `review` and in the pre-push hook, unless the user opts into reviewing it as
// a first deployment.
func TestBaseThatFailsToSynthesizeBlocks(t *testing.T) {
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "cdk.json"), []byte(`{"app": "node -e \"console.error('Cannot find module ./lib/stack'); process.exit(3)\""}`), 0o644)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "a base whose app does not run")
	base := gitRun(t, dir, "rev-parse", "HEAD")
	head := commitAssembly(t, dir, "the head, with its assembly", "Bucket", "Queue")

	code, stdout, stderr := run(t, "review", "--repo", dir, "--base", base, "--head", head)
	if code != ExitVerdict || !strings.Contains(stdout, "base failed to synthesize · blocked") ||
		!strings.Contains(stdout, "✗ blocked: the base "+base[:12]+" failed to synthesize") {
		t.Errorf("fail closed: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "review", "--repo", dir, "--base", base, "--head", head, "--format", "markdown")
	if code != ExitVerdict || !strings.Contains(stdout, "**Blocked: the base "+base[:12]+" failed to synthesize") || !strings.Contains(stdout, "Queue") {
		t.Errorf("markdown: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = run(t, "review", "--repo", dir, "--base", base, "--head", head, "--base-failure", "first-deployment")
	if code != ExitOK || !strings.Contains(stdout, "note: The base ("+base[:12]+") failed to synthesize") {
		t.Errorf("opted in: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run(t, "review", "--repo", dir, "--base", base, "--head", head, "--base-failure", "ignore"); code != ExitUsage ||
		!strings.Contains(stderr, "use fail (block the review) or first-deployment") {
		t.Errorf("bad value: exit %d %s", code, stderr)
	}
	// --repo alone: HEAD against its merge base with the default branch (here HEAD itself).
	if code, stdout, stderr := run(t, "review", "--repo", dir, "--no-color"); code != ExitOK || !strings.HasPrefix(stdout, "cdkbot review: no changes") {
		t.Errorf("--repo alone: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
