package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// demoWorktree is the demo repository (two commits on master, the second destructive) and a
// worktree of it made by git worktree add, on branch feature at master's tip.
func demoWorktree(t *testing.T) (main, wt string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	main = t.TempDir()
	if err := buildDemoRepo(main); err != nil {
		t.Fatal(err)
	}
	wt = filepath.Join(t.TempDir(), "wt")
	gitRun(t, main, "worktree", "add", "-q", "-b", "feature", wt, "HEAD")
	return main, wt
}

// `review --repo <worktree>` reads the worktree's revisions from the repository it belongs to
// (it once failed "reference not found").
func TestReviewInAWorktree(t *testing.T) {
	_, wt := demoWorktree(t)
	code, stdout, stderr := run(t, "review", "--repo", wt, "--base", "HEAD~1", "--head", "HEAD", "--no-color")
	if code != ExitVerdict || !strings.Contains(stdout, "gate destroy-stateful blocks") {
		t.Errorf("review --repo <worktree>: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// --repo alone: HEAD against its merge base with the default branch (master, here HEAD).
	if code, stdout, stderr := run(t, "review", "--repo", wt, "--no-color"); code != ExitOK ||
		!strings.HasPrefix(stdout, "cdkbot review: no changes") {
		t.Errorf("--repo <worktree> alone: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// The pre-push hook installed from a worktree goes where git runs it (the repository's hooks,
// which every worktree shares), and a push from the worktree is reviewed and blocked when
// destructive (it once printed "skipping the review" and let the push through).
func TestPrePushHookInAWorktree(t *testing.T) {
	main, wt := demoWorktree(t)
	bin := filepath.Join(t.TempDir(), "cdkbot")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/cdkbot").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "--bare", "-q", remote).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	gitRun(t, main, "remote", "add", "origin", remote)
	push := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"push"}, args...)...)
		cmd.Dir = wt
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	code, stdout, stderr := run(t, "hook", "install", "--repo", wt, "--command", bin)
	if want := filepath.Join(main, ".git", "hooks", "pre-push"); code != ExitOK || !strings.Contains(stdout, want) {
		t.Fatalf("install: %d %s %s (want %s)", code, stdout, stderr, want)
	}
	if out, err := push("-q", "origin", "HEAD~1:refs/heads/master"); err != nil {
		t.Fatalf("first push was blocked: %v\n%s", err, out)
	}
	out, err := push("origin", "HEAD:refs/heads/master")
	if err == nil {
		t.Fatalf("the destructive push from a worktree went through:\n%s", out)
	}
	for _, want := range []string{"cdkbot: reviewing", "gate destroy-stateful blocks", "git push --no-verify"} {
		if !strings.Contains(out, want) {
			t.Errorf("push output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "skipping") {
		t.Errorf("the hook skipped the review:\n%s", out)
	}
	if out, err := push("-q", "--no-verify", "origin", "HEAD:refs/heads/master"); err != nil {
		t.Fatalf("--no-verify: %v %s", err, out)
	}
}

// A review the hook cannot run blocks the push with the reason and the way around it: here a
// new branch with no default branch in the clone to compare it with.
func TestPrePushHookBlocksWhatItCannotReview(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "feature")
	head := commitAssembly(t, dir, "an app", "Bucket")
	t.Chdir(dir)
	in := "refs/heads/feature " + head + " refs/heads/feature " + strings.Repeat("0", 40) + "\n"
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"hook", "run", "--", "origin", "/remote.git"},
		strings.NewReader(in), &stdout, &stderr)
	if code == ExitOK || !strings.Contains(stderr.String(), "refs/heads/feature is a new branch") ||
		!strings.Contains(stderr.String(), "the push is blocked") || !strings.Contains(stderr.String(), "git push --no-verify") {
		t.Errorf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}
