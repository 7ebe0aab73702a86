package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

var author = object.Signature{Name: "test", Email: "test@example.com", When: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}

func write(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveMergeBaseMaterialize(t *testing.T) {
	root := t.TempDir()
	r, err := Init(root)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "cdk.out/manifest.json", `{"v": 1}`)
	write(t, root, "src/app.js", "one")
	first, err := r.CommitAll("first", author)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "cdk.out/manifest.json", `{"v": 2}`)
	if err := os.Symlink("manifest.json", filepath.Join(root, "cdk.out", "link.json")); err != nil {
		t.Fatal(err)
	}
	second, err := r.CommitAll("second", author)
	if err != nil {
		t.Fatal(err)
	}
	// Uncommitted edits in the working tree must not leak into a materialized revision.
	write(t, root, "cdk.out/manifest.json", `{"v": "dirty"}`)

	opened, err := Open(filepath.Join(root, "src"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := opened.Resolve("HEAD~1"); got != first {
		t.Errorf("HEAD~1 = %s, want %s", got, first)
	}
	if mb, err := opened.MergeBase("HEAD", first); err != nil || mb != first {
		t.Errorf("merge base %s %v", mb, err)
	}
	for rev, want := range map[string]string{first: `{"v": 1}`, second: `{"v": 2}`} {
		dst := t.TempDir()
		if err := opened.Materialize(rev, "cdk.out", dst); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dst, "manifest.json")); string(b) != want {
			t.Errorf("%s: %s, want %s", rev, b, want)
		}
		if _, err := os.Stat(filepath.Join(dst, "app.js")); err == nil {
			t.Error("materialized more than the directory asked for")
		}
	}
	dst := t.TempDir()
	_ = opened.Materialize(second, "cdk.out", dst)
	if target, err := os.Readlink(filepath.Join(dst, "link.json")); err != nil || target != "manifest.json" {
		t.Errorf("symlink: %q %v", target, err)
	}
	if err := opened.Materialize(first, "nope", t.TempDir()); !errors.Is(err, ErrNoSuchPath) {
		t.Errorf("missing directory: %v", err)
	}
	if _, err := opened.Resolve("no-such-branch"); err == nil {
		t.Error("resolved a missing branch")
	}
	if opened.Shallow() {
		t.Error("a full repository is not shallow")
	}
}

func TestOpenOutsideARepository(t *testing.T) {
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("opened a directory that is not in a repository")
	}
}

func TestDeepenAShallowClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	origin := t.TempDir()
	r, err := Init(origin)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		write(t, origin, "f.txt", strings.Repeat("x", i+1))
		if _, err := r.CommitAll("c", author); err != nil {
			t.Fatal(err)
		}
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", "--depth", "1", "file://"+origin, clone).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	shallow, err := Open(clone)
	if err != nil {
		t.Fatal(err)
	}
	if !shallow.Shallow() {
		t.Fatal("clone is not shallow")
	}
	if _, err := shallow.Resolve("HEAD~2"); err == nil || !strings.Contains(err.Error(), "fetch-depth: 0") {
		t.Fatalf("want a hint about fetch-depth, got %v", err)
	}
	if err := shallow.Deepen(); err != nil {
		t.Fatal(err)
	}
	if _, err := shallow.Resolve("HEAD~2"); err != nil {
		t.Errorf("after deepening: %v", err)
	}
}

// The id of what a synthesis reads changes only when those files do, and only they are written.
func TestObjectIDAndMaterializePaths(t *testing.T) {
	root := t.TempDir()
	r, err := Init(root)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "infra/cdk.json", `{"app": "node app.js"}`)
	write(t, root, "infra/lib/stack.js", "v1")
	write(t, root, "package-lock.json", "{}")
	write(t, root, "README.md", "one")
	first, err := r.CommitAll("first", author)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "README.md", "two")
	docs, err := r.CommitAll("docs only", author)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "infra/lib/stack.js", "v2")
	app, err := r.CommitAll("app change", author)
	if err != nil {
		t.Fatal(err)
	}
	id := func(rev, p string) string {
		t.Helper()
		got, err := r.ObjectIDs(rev, []string{p})
		if err != nil {
			t.Fatal(err)
		}
		return got[0]
	}
	if id(first, "infra") == "" || id(first, "infra") != id(docs, "infra") || id(docs, "infra") == id(app, "infra") {
		t.Errorf("infra ids: %s %s %s", id(first, "infra"), id(docs, "infra"), id(app, "infra"))
	}
	if id(first, "") == id(docs, "") || id(first, "no/such") != "" || id(first, "package-lock.json") == "" {
		t.Error("root and file ids")
	}
	dst := t.TempDir()
	if err := r.MaterializePaths(app, []string{"infra/lib", "infra", "package-lock.json", "yarn.lock"}, dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "infra", "lib", "stack.js")); string(b) != "v2" {
		t.Errorf("stack.js: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dst, "package-lock.json")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dst, "README.md")); err == nil {
		t.Error("wrote a file nobody asked for")
	}
}

// Files lists a revision's regular files as committed, whatever the working tree holds: no
// links, nothing of another revision, and a listing past its bound is refused, never cut.
func TestFiles(t *testing.T) {
	root := t.TempDir()
	r, err := Init(root)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "infra/cdk.json", "{}")
	write(t, root, "README.md", "# r")
	if err := os.Symlink("infra/cdk.json", filepath.Join(root, "cdk.json")); err != nil {
		t.Fatal(err)
	}
	first, err := r.CommitAll("first", author)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "services/cdk.json", "{}")
	if _, err := r.CommitAll("second", author); err != nil {
		t.Fatal(err)
	}
	write(t, root, "uncommitted/cdk.json", "{}")
	got, err := r.Files(first)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "README.md infra/cdk.json" {
		t.Errorf("Files(first) = %q", got)
	}
	if got, err := r.Files("HEAD"); err != nil || strings.Join(got, " ") != "README.md infra/cdk.json services/cdk.json" {
		t.Errorf("Files(HEAD) = %q, %v", got, err)
	}
	if _, err := r.files("HEAD", 2); !errors.Is(err, ErrTooManyFiles) || !strings.Contains(err.Error(), "more than 2 files") {
		t.Errorf("past the bound: %v", err)
	}
	if _, err := r.Files("nope"); err == nil {
		t.Error("an unknown revision lists nothing without an error")
	}
}
