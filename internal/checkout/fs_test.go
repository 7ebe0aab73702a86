package checkout_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cdkbot/cdkbot/internal/checkout"
)

// FS is a proper file system of the tree (links inside it included), and refuses every way out
// of it by name.
func TestFS(t *testing.T) {
	root, outside := tree(t)
	must(t, os.WriteFile(filepath.Join(root, "infra", "app.template.json"), []byte("{}"), 0o644))
	must(t, os.Symlink("infra/app.template.json", filepath.Join(root, "linked.json")))
	if err := fstest.TestFS(checkout.FS(root), "cdk.json", "infra/app.template.json", "linked.json"); err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink(outside, filepath.Join(root, "manifest.json")))
	fsys := checkout.FS(root)
	for op, call := range map[string]func() error{
		"open": func() error { _, err := fsys.Open("manifest.json"); return err },
		"stat": func() error { _, err := fs.Stat(fsys, "manifest.json"); return err },
		"read": func() error { _, err := fs.ReadFile(fsys, "manifest.json"); return err },
	} {
		err := call()
		var refused *checkout.RefusedError
		if !errors.As(err, &refused) || !strings.HasPrefix(err.Error(), "manifest.json is, or goes through, a symbolic link "+
			"that leads out of "+root) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: %v", op, err)
		}
	}
	// The link itself is inside: what it is and says can be read, not what it names.
	if fi, err := fs.Lstat(fsys, "manifest.json"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("lstat: %v, %v", fi, err)
	}
	if target, err := fs.ReadLink(fsys, "manifest.json"); err != nil || target != outside {
		t.Errorf("readlink: %q, %v", target, err)
	}
}
