package gitrepo

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
)

// gitRun runs the real git in dir (gitcli.Run).
func gitRun(t *testing.T, dir string, args ...string) string { return gitcli.Run(t, dir, args...) }

// A worktree made by git worktree add has a .git file and keeps its refs and objects in the
// repository it belongs to: Open reads them there (it once said "reference not found").
func TestOpenAWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	gitRun(t, root, "init", "-q")
	write(t, root, "app/cdk.json", `{"v": "main"}`)
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "main")
	wt := filepath.Join(t.TempDir(), "wt")
	gitRun(t, root, "worktree", "add", "-q", "-b", "feature", wt)
	write(t, wt, "app/cdk.json", `{"v": "feature"}`)
	gitRun(t, wt, "commit", "-q", "-am", "feature")

	r, err := Open(filepath.Join(wt, "app"))
	if err != nil {
		t.Fatal(err)
	}
	if real, _ := filepath.EvalSymlinks(wt); r.Root() != wt && r.Root() != real {
		t.Errorf("root %s, want the worktree %s", r.Root(), wt)
	}
	head, err := r.Resolve("HEAD")
	if err != nil || head != gitRun(t, wt, "rev-parse", "HEAD") {
		t.Fatalf("HEAD = %s, %v", head, err)
	}
	main, err := r.Resolve("main")
	if err != nil {
		t.Fatal(err)
	}
	if mb, err := r.MergeBase("main", "HEAD"); err != nil || mb != main {
		t.Errorf("merge base %s %v, want %s", mb, err, main)
	}
	if b := r.DefaultBranch(); b != "main" {
		t.Errorf("default branch %q", b)
	}
	if raw, err := r.ReadFile("main", "app/cdk.json", 100); err != nil || string(raw) != `{"v": "main"}` {
		t.Errorf("main's cdk.json: %q %v", raw, err)
	}
}

// ReadFile reads a revision's file as committed, never the working tree's, and only a regular
// file within its limit: a symbolic link (to a file, or as a directory on the way) is refused,
// as are a directory and a file over the limit.
func TestReadFile(t *testing.T) {
	root := t.TempDir()
	r, err := Init(root)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "app/package.json", `{"committed": true}`)
	write(t, root, "app/big.json", strings.Repeat("x", 101))
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "app", "cdk.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("app", filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	rev, err := r.CommitAll("first", author)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "app/package.json", `{"dirty": true}`)

	if raw, err := r.ReadFile(rev, "app/package.json", 100); err != nil || string(raw) != `{"committed": true}` {
		t.Errorf("package.json: %q %v", raw, err)
	}
	if raw, err := r.ReadFile(rev, "/app/../app/package.json", 100); err != nil || len(raw) == 0 {
		t.Errorf("unclean path: %q %v", raw, err)
	}
	for _, name := range []string{"app/none.json", "none/package.json", "app/package.json/x"} {
		if _, err := r.ReadFile(rev, name, 100); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	for name, why := range map[string]string{
		"app/cdk.json":        "app/cdk.json at " + rev + " is a symbolic link",
		"linked/package.json": "linked at " + rev + " is a symbolic link",
		"app":                 "is a directory, not a regular file",
		"app/big.json":        "is 101 bytes, over cdkbot's limit of 100 bytes",
	} {
		_, err := r.ReadFile(rev, name, 100)
		var refused *RefusedError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "root:") {
			t.Errorf("%s: %v, want refused: %s", name, err, why)
		}
	}
}
