package checkout_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/checkout"
)

const secret = "s3cr3t-of-root"

// tree makes a checkout and, beside it, a file outside it holding a secret.
func tree(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "checkout"), filepath.Join(base, "secret.json")
	must(t, os.MkdirAll(filepath.Join(root, "infra"), 0o755))
	must(t, os.WriteFile(outside, []byte(`{"key": "`+secret+`"}`), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "cdk.json"), []byte(`{"app": "node app.js"}`), 0o644))
	must(t, os.MkdirAll(filepath.Join(base, "elsewhere"), 0o755))
	return root, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Inside the checkout, regular files and links with a relative target inside it are read; every
// way out (a link to an absolute path, even one inside; a relative link up and out; a directory
// linked out; a name with ..) is refused naming the file, and never shows what is beyond.
func TestReadFileStaysInsideTheCheckout(t *testing.T) {
	root, outside := tree(t)
	links := map[string]string{
		"same.json":               "cdk.json",
		"infra/cdk.json":          "../cdk.json",
		"abs-inside.json":         filepath.Join(root, "cdk.json"),
		"cdk.context.json":        outside,
		"up.json":                 "../secret.json",
		"linked-dir":              filepath.Dir(outside),
		"dangling.json":           "nothing-here.json",
		"package-lock.json":       "/dev/zero",
		"infra/package-lock.json": "../../secret.json",
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(root, name)))
	}
	if _, err := checkout.ReadFile(root, "../secret.json", 1<<20); err == nil ||
		err.Error() != "../secret.json is not inside the checkout: cdkbot reads the files of a repository it reviews "+
			"only inside it; name a file of the repository" {
		t.Errorf("a name out of the checkout: %v", err)
	}
	for _, c := range []struct {
		name, want string
		missing    bool
	}{
		{name: "cdk.json", want: `{"app": "node app.js"}`},
		{name: "same.json", want: `{"app": "node app.js"}`},
		{name: "infra/cdk.json", want: `{"app": "node app.js"}`},
		{name: "abs-inside.json"},
		{name: "cdk.context.json"},
		{name: "up.json"},
		{name: "linked-dir/secret.json"},
		{name: "package-lock.json"},
		{name: "infra/package-lock.json"},
		{name: "dangling.json", missing: true},
		{name: "absent.json", missing: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := checkout.ReadFile(root, c.name, checkout.MaxSettingsFile)
			var refused *checkout.RefusedError
			switch {
			case c.want != "":
				if err != nil || string(got) != c.want {
					t.Fatalf("got %q, %v; want %q", got, err, c.want)
				}
			case c.missing:
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("got %q, %v; want a missing file", got, err)
				}
			case !errors.As(err, &refused) || got != nil:
				t.Fatalf("got %q, %v; want refused", got, err)
			case !strings.HasPrefix(err.Error(), c.name+" ") || !strings.Contains(err.Error(), "out of the checkout") ||
				strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "commit the file itself"):
				t.Errorf("error %q: want it to name %s, say why and what to do, and nothing of the file beyond", err, c.name)
			}
		})
	}
}

// Only regular files: a named pipe is refused at once (opening it would wait for a writer), a
// directory too.
func TestReadFileOnlyRegularFiles(t *testing.T) {
	root, _ := tree(t)
	if runtime.GOOS != "windows" {
		must(t, mkfifo(filepath.Join(root, "yarn.lock")))
	}
	must(t, os.Mkdir(filepath.Join(root, "cdk.context.json"), 0o755))
	for name, kind := range map[string]string{"yarn.lock": "a named pipe", "cdk.context.json": "a directory"} {
		if name == "yarn.lock" && runtime.GOOS == "windows" {
			continue
		}
		done := make(chan error, 1)
		go func() {
			_, err := checkout.ReadFile(root, name, checkout.MaxLockFile)
			done <- err
		}()
		select {
		case err := <-done:
			var refused *checkout.RefusedError
			if !errors.As(err, &refused) || err.Error() != name+" is "+kind+", not a regular file: "+
				"cdkbot reads only regular files; commit the file itself" {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5s", name)
		}
	}
}

// A file over its limit is refused from its size, before a byte is read: a sparse file of a
// terabyte costs neither time nor memory. At the limit it is read.
func TestReadFileIsBounded(t *testing.T) {
	root, _ := tree(t)
	huge := filepath.Join(root, "package-lock.json")
	f, err := os.Create(huge)
	must(t, err)
	must(t, f.Truncate(1<<40)) // sparse: no disk used
	must(t, f.Close())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err = checkout.ReadFile(root, "package-lock.json", checkout.MaxLockFile)
	runtime.ReadMemStats(&after)
	var refused *checkout.RefusedError
	if !errors.As(err, &refused) ||
		err.Error() != "package-lock.json is 1099511627776 bytes, over cdkbot's limit of 67108864 bytes for this file: "+
			"a file this large is not one a CDK project commits; check what was committed under this name" {
		t.Fatalf("got %v", err)
	}
	if d, alloc := time.Since(start), after.TotalAlloc-before.TotalAlloc; d > time.Second || alloc > 1<<20 {
		t.Errorf("refusing took %v and %d bytes", d, alloc)
	}

	must(t, os.WriteFile(filepath.Join(root, "cdk.json"), make([]byte, 10), 0o644))
	if b, err := checkout.ReadFile(root, "cdk.json", 10); err != nil || len(b) != 10 {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
	if _, err := checkout.ReadFile(root, "cdk.json", 9); !errors.As(err, &refused) {
		t.Errorf("over the limit: %v", err)
	}
}

// A file that grows after it is opened is cut at the limit and refused, not read on.
func TestOpenRefusesAFileThatGrows(t *testing.T) {
	root, _ := tree(t)
	name := filepath.Join(root, "package-lock.json")
	must(t, os.WriteFile(name, []byte("12345"), 0o644))
	r, err := checkout.Open(root, "package-lock.json", 8)
	must(t, err)
	defer r.Close()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("6789")
	must(t, err)
	must(t, f.Close())
	b, err := io.ReadAll(r)
	var refused *checkout.RefusedError
	if !errors.As(err, &refused) || len(b) != 8 || !strings.Contains(err.Error(), "grew, while it was read, past cdkbot's limit of 8") {
		t.Errorf("read %q, %v", b, err)
	}
}

// The top of a checkout is the repository's (where .git is) when there is one, else the directory.
func TestTop(t *testing.T) {
	root, _ := tree(t)
	if got := checkout.Top(filepath.Join(root, "infra")); got != filepath.Join(root, "infra") {
		t.Errorf("no repository: %s", got)
	}
	must(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	if got := checkout.Top(filepath.Join(root, "infra")); got != root {
		t.Errorf("in a repository: %s, want %s", got, root)
	}
	if got := checkout.Rel(root, filepath.Join(root, "infra", "cdk.json")); got != filepath.Join("infra", "cdk.json") {
		t.Errorf("Rel: %s", got)
	}
}
