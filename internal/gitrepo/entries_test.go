package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// Entries lists the files below a directory with their ids, and does not enter what skip leaves out.
func TestEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"app/a.txt": "a", "app/docs/d.md": "d", "app/lib/b.txt": "b", "other.txt": "o"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sha, err := r.CommitAll("files", object.Signature{Name: "t", Email: "t@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	entered := map[string]bool{}
	got, err := r.Entries(sha, "app", func(rel string, isDir bool) bool {
		entered[rel] = true
		return isDir && rel == "docs"
	})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range got {
		paths = append(paths, e.Path)
	}
	if strings.Join(paths, ",") != "a.txt,lib/b.txt" || entered["docs/d.md"] || len(got[0].ID) != 40 {
		t.Errorf("entries %+v (visited %v)", got, entered)
	}
	ids, _ := r.ObjectIDs(sha, []string{"app/a.txt"})
	if got[0].ID != ids[0] {
		t.Errorf("id %s, want %s", got[0].ID, ids[0])
	}
	if _, err := r.Entries(sha, "nope", nil); err == nil {
		t.Error("a missing directory listed")
	}
}
