//go:build unix

package synth

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shellApp is an app without node: it writes an empty assembly and what it was given as
// CDK_CONTEXT_JSON.
const shellApp = `printf '%s' "$CDK_CONTEXT_JSON" > "$CDK_OUTDIR/context.json"; ` +
	`echo '{"version": "36.0.0", "artifacts": {}}' > "$CDK_OUTDIR/manifest.json"`

// shellCheckout makes a checkout with the app in infra/ (Root is the checkout, Dir the app) and,
// beside the checkout, a file of cdkbot's user holding a secret; npm on the app's PATH is a stub
// that says when it ran.
func shellCheckout(t *testing.T) (o Options, secretFile string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "src")
	bin := filepath.Join(base, "bin")
	for _, d := range []string{filepath.Join(root, "infra"), bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secretFile = filepath.Join(base, "secret.json")
	write(t, secretFile, `{"db-password": "s3cr3t-of-root"}`, 0o600)
	write(t, filepath.Join(root, "infra", "cdk.json"), `{"app": "true"}`, 0o644)
	write(t, filepath.Join(bin, "npm"), "#!/bin/sh\necho npm ran\n", 0o755)
	return Options{Dir: filepath.Join(root, "infra"), Root: root, OutDir: filepath.Join(base, "out"),
		SynthCommand: shellApp, CacheDir: filepath.Join(base, "cache"),
		Env: []string{"PATH=" + bin + ":/usr/bin:/bin"}, Timeout: time.Minute}, secretFile
}

func write(t *testing.T, name, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// cdkbot, often root, reads cdk.json and cdk.context.json for the app: a committed link out of
// the checkout must not hand the file it names to the app (in CDK_CONTEXT_JSON), nor to the log.
// The synthesis fails saying which file and why; the app never runs.
func TestAppSettingsAreReadInsideTheCheckout(t *testing.T) {
	for _, name := range []string{"cdk.context.json", "cdk.json"} {
		t.Run(name, func(t *testing.T) {
			o, secretFile := shellCheckout(t)
			link := filepath.Join(o.Dir, name)
			os.Remove(link)
			if err := os.Symlink(secretFile, link); err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			o.Log = &log
			err := Run(context.Background(), o)
			passed, _ := os.ReadFile(filepath.Join(o.OutDir, "context.json"))
			if strings.Contains(string(passed), "s3cr3t") || strings.Contains(log.String(), "s3cr3t") ||
				err != nil && strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("the secret reached the app or the log: CDK_CONTEXT_JSON %s\nlog: %s\nerr: %v", passed, log.String(), err)
			}
			want := "infra/" + name + " is, or goes through, a symbolic link that leads out of the checkout"
			if err == nil || !strings.HasPrefix(err.Error(), want) || passed != nil {
				t.Errorf("got %v (the app ran: %v), want %q", err, passed != nil, want)
			}
		})
	}
}

// A link that stays inside the checkout is followed: a monorepo's apps may share one context.
func TestAppSettingsFollowLinksInsideTheCheckout(t *testing.T) {
	o, _ := shellCheckout(t)
	write(t, filepath.Join(o.Root, "context.json"), `{"shared": "yes"}`, 0o644)
	if err := os.Symlink("../context.json", filepath.Join(o.Dir, "cdk.context.json")); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if passed, _ := os.ReadFile(filepath.Join(o.OutDir, "context.json")); !strings.Contains(string(passed), `"shared":"yes"`) {
		t.Errorf("CDK_CONTEXT_JSON %s", passed)
	}
}

// The lock file is read (its digest keys the dependency cache) before the install runs: one that
// is a device, a named pipe or huge is refused at once, without reading it, in bounded memory
// (package-lock.json -> /dev/zero used to end cdkbot with "fatal error: out of memory").
func TestLockFileIsRefusedQuickly(t *testing.T) {
	cases := map[string]func(t *testing.T, o Options, lock string) string{
		"link to /dev/zero": func(t *testing.T, o Options, lock string) string {
			must(t, os.Symlink("/dev/zero", lock))
			return "infra/package-lock.json is, or goes through, a symbolic link that leads out of the checkout"
		},
		"link to a huge sparse file outside": func(t *testing.T, o Options, lock string) string {
			huge := filepath.Join(filepath.Dir(o.Root), "huge")
			sparse(t, huge)
			must(t, os.Symlink(huge, lock))
			return "infra/package-lock.json is, or goes through, a symbolic link that leads out of the checkout"
		},
		"a huge sparse file": func(t *testing.T, o Options, lock string) string {
			sparse(t, lock)
			return "infra/package-lock.json is 1099511627776 bytes, over cdkbot's limit of 67108864 bytes"
		},
		"a named pipe": func(t *testing.T, o Options, lock string) string {
			must(t, syscall.Mkfifo(lock, 0o644))
			return "infra/package-lock.json is a named pipe, not a regular file"
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			o, _ := shellCheckout(t)
			want := setup(t, o, filepath.Join(o.Dir, "package-lock.json"))
			var log strings.Builder
			o.Log = &log
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			err := Run(context.Background(), o)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v, want %q", err, want)
			}
			if strings.Contains(log.String(), "npm ran") {
				t.Errorf("the install ran: %s", log.String())
			}
			if d, alloc := time.Since(start), after.TotalAlloc-before.TotalAlloc; d > 5*time.Second || alloc > 8<<20 {
				t.Errorf("refusing took %v and %d bytes", d, alloc)
			}
		})
	}
}

func sparse(t *testing.T, name string) {
	t.Helper()
	f, err := os.Create(name)
	must(t, err)
	must(t, f.Truncate(1<<40))
	must(t, f.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
