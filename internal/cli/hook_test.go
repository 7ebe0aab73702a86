package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrePushHookBlocksADestructivePush pushes to a local bare remote with the real git: the
// hook runs cdkbot, lets the first push through and blocks the destructive second one, which
// --no-verify then bypasses.
func TestPrePushHookBlocksADestructivePush(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bin := filepath.Join(t.TempDir(), "cdkbot")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/cdkbot")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	work := t.TempDir()
	if err := buildDemoRepo(work); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := exec.Command("git", "init", "--bare", "-q", remote).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := git("remote", "add", "origin", remote); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	code, stdout, stderr := run(t, "hook", "install", "--repo", work, "--command", bin)
	if code != ExitOK || !strings.Contains(stdout, "installed") {
		t.Fatalf("install: %d %s %s", code, stdout, stderr)
	}
	// The first commit: a new branch whose merge base with the default branch is itself.
	if out, err := git("push", "-q", "origin", "HEAD~1:refs/heads/master"); err != nil {
		t.Fatalf("first push was blocked: %v\n%s", err, out)
	}
	out, err := git("push", "origin", "HEAD:refs/heads/master")
	if err == nil {
		t.Fatalf("the destructive push went through:\n%s", out)
	}
	for _, want := range []string{"cdkbot: reviewing", "gate destroy-stateful blocks", "git push --no-verify"} {
		if !strings.Contains(out, want) {
			t.Errorf("push output lacks %q:\n%s", want, out)
		}
	}
	if out, err := git("push", "-q", "--no-verify", "origin", "HEAD:refs/heads/master"); err != nil {
		t.Fatalf("--no-verify: %v %s", err, out)
	}
	// A chained hook of the user's still runs first.
	hooks := filepath.Join(work, ".git", "hooks")
	os.Remove(filepath.Join(hooks, "pre-push"))
	os.WriteFile(filepath.Join(hooks, "pre-push"), []byte("#!/bin/sh\necho user-hook-ran\n"), 0o755)
	if code, _, stderr := run(t, "hook", "install", "--repo", work, "--command", bin, "--chain"); code != ExitOK {
		t.Fatal(stderr)
	}
	if out, _ := git("push", "origin", "HEAD:refs/heads/other"); !strings.Contains(out, "user-hook-ran") {
		t.Errorf("chained hook did not run:\n%s", out)
	}
	if code, stdout, _ := run(t, "hook", "uninstall", "--repo", work); code != ExitOK || !strings.Contains(stdout, "removed") {
		t.Errorf("uninstall: %d %s", code, stdout)
	}
}
