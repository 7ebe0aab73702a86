package hook

import (
	"os"
	"path/filepath"
	"testing"
)

// In a worktree (git worktree add), .git is a file naming the worktree's own git dir; git runs
// the hooks of the repository it belongs to (named by "commondir" there), so the hook goes there.
func TestHooksDirOfAWorktree(t *testing.T) {
	repo, wt := t.TempDir(), t.TempDir()
	own := filepath.Join(repo, ".git", "worktrees", "wt")
	if err := os.MkdirAll(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+own+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := HooksDir(wt)
	if want := filepath.Join(repo, ".git", "hooks"); err != nil || got != want {
		t.Errorf("HooksDir = %q, %v; want %q", got, err, want)
	}
}
