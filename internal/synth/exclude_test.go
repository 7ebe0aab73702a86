package synth

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestExcludesMatchLikeWatchExclude(t *testing.T) {
	t.Parallel()
	e, err := ParseExcludes([]string{"*.md", "/docs/", "**/*.test.ts", "build/out", "/cdk*.json", "/package.json", "tmp/"})
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{
		"README.md":          true,
		"lambda/README.md":   true,  // no slash: any depth
		"docs":               false, // a file named docs: the pattern is for directories
		"docs/guide.txt":     true,
		"src/docs/guide.txt": false, // anchored
		"test/a.test.ts":     true,
		"a.test.ts":          true,
		"build/out/x.js":     true,
		"lib/build/out":      false,
		"tmp/x":              true,
		"src/tmp/y":          true,
		"cdk.json":           false, // cdkbot reads it to synthesize
		"cdk.context.json":   false,
		"cdk.watch.json":     true,
		"package.json":       false,
		"lib/stack.ts":       false,
		"README.mdx":         false,
	} {
		if got := e.Excluded(rel, false); got != want {
			t.Errorf("%s: excluded %v, want %v", rel, got, want)
		}
	}
	if !e.Excluded("tmp", true) || e.Excluded("tmp", false) {
		t.Error("tmp/ matches the directory, not a file")
	}
	for _, bad := range []string{"", "/", "!keep.md", `a\b`, "../x", "[", " "} {
		if _, err := ParseExcludes([]string{bad}); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if e, err := ParseExcludes(nil); err != nil || !e.Empty() {
		t.Errorf("none: %v %v", e, err)
	}
	if _, err := ParseExcludes(DefaultExcludes); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// RemoveExcluded takes the excluded files out of a checkout, never following a link, and
// spares what was named on purpose.
func TestRemoveExcluded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	for _, f := range []string{"README.md", "docs/a.txt", "docs/keep/b.txt", "lib/app.js", "lib/README.md", "cdk.json"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	e, err := ParseExcludes([]string{"/*.md", "/docs/", "*.md"})
	if err != nil {
		t.Fatal(err)
	}
	if err := RemoveExcluded(dir, e, func(rel string) bool {
		return rel == "docs" || rel == "docs/keep" || strings.HasPrefix(rel, "docs/keep/")
	}); err != nil {
		t.Fatal(err)
	}
	var left []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			left = append(left, filepath.ToSlash(rel))
		}
		return err
	})
	slices.Sort(left)
	if want := []string{"cdk.json", "docs/keep/b.txt", "lib/app.js", "linked"}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	if _, err := os.Stat(filepath.Join(outside, "secret.md")); err != nil {
		t.Errorf("a file behind a link was removed: %v", err)
	}
}
