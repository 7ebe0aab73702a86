// Package gitcli runs the real git for tests that make repositories the way users do (worktrees,
// branches, commits), isolated from the machine's git configuration.
package gitcli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Run runs git in dir with a fixed identity, main as the default branch and no user or system
// configuration, and returns its trimmed output; a failure ends the test.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com",
		"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Commit writes files (slash-separated names relative to dir, content by name), commits
// everything in dir with message, and returns the commit's id; a failure ends the test.
func Commit(t testing.TB, dir, message string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Run(t, dir, "add", "-A")
	Run(t, dir, "commit", "-q", "-m", message)
	return Run(t, dir, "rev-parse", "HEAD")
}
