package cli

import (
	"os"
	"os/exec"
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
	if code != ExitVerdict || !strings.HasPrefix(stdout, "cdkbot review: blocked · ") ||
		!strings.Contains(stdout, "base failed to synthesize") ||
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

// A base whose install fails (`npm ci` on a lock file out of sync) blocks the same way, and the
// reason shown is npm's, not its usage text.
func TestBaseWhoseInstallFailsBlocks(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "cdk.json"), []byte(`{"app": "node app.js"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"app","version":"1.0.0","dependencies":{"is-number":"7.0.0"}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(`{"name":"app","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"app","version":"1.0.0"}}}`), 0o644)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "a base whose lock file is out of sync")
	base := gitRun(t, dir, "rev-parse", "HEAD")
	head := commitAssembly(t, dir, "the head, with its assembly", "Bucket")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, stdout, stderr := run(t, "review", "--repo", dir, "--base", base, "--head", head, "--synth-timeout", "2m")
	if code != ExitVerdict || !strings.Contains(stdout, "✗ blocked: the base "+base[:12]+" failed to synthesize: install") ||
		!strings.Contains(stdout, "can only install packages when your package.json and package-lock.json") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// --synth-user runs the revisions' apps as that user (root only); bad values are usage errors.
func TestSynthUserRunsTheAppAsThatUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "cdk.json"), []byte(`{"app": "node -e \"console.error('Error: running as uid ' + process.getuid()); process.exit(3)\""}`), 0o644)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "a base that says who runs it")
	base := gitRun(t, dir, "rev-parse", "HEAD")
	head := commitAssembly(t, dir, "the head, with its assembly", "Bucket")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	// actions/checkout's persisted token: in .git/config, world-readable.
	gitRun(t, dir, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA==")
	os.Chmod(filepath.Join(dir, ".git", "config"), 0o644)
	code, stdout, stderr := run(t, "review", "--repo", dir, "--base", base, "--head", head, "--synth-user", "61002:61002")
	if code != ExitVerdict || !strings.Contains(stdout, "running as uid 61002") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if fi, _ := os.Stat(filepath.Join(dir, ".git", "config")); fi.Mode().Perm() != 0o600 {
		t.Errorf(".git/config is still mode %04o: the app could read the persisted token", fi.Mode().Perm())
	}
	for spec, want := range map[string]string{"0": "uid 0 is root", "root": "it is root", "no-such-user-here": "no such user", "1:x": "the group is not a number", "61002,61002": "must differ", "1,2,3": "one user, or two", ",61003": "no such user"} {
		if code, _, stderr := run(t, "review", "--repo", dir, "--base", base, "--head", head, "--synth-user", spec); code != ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("--synth-user %s: exit %d %s", spec, code, stderr)
		}
	}
}
