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

// postinstallCheckout is shellCheckout with an app whose install, like a `postinstall` that
// installs lambdas/, writes lambdas/node_modules/x beside the app's own node_modules; the app
// fails as tsc would (TS2307) when it cannot find that module.
func postinstallCheckout(t *testing.T, lambdasLock string) Options {
	t.Helper()
	o, _ := shellCheckout(t)
	must(t, os.MkdirAll(filepath.Join(o.Dir, "lambdas"), 0o755))
	write(t, filepath.Join(o.Dir, "package-lock.json"), `{"lockfileVersion": 3}`, 0o644)
	if lambdasLock != "" {
		write(t, filepath.Join(o.Dir, "lambdas", "package-lock.json"), lambdasLock, 0o644)
	}
	npm := filepath.Join(strings.TrimPrefix(strings.Split(o.Env[0], ":")[0], "PATH="), "npm")
	write(t, npm, "#!/bin/sh\necho npm ran\nmkdir -p node_modules/cdk lambdas/node_modules/x &&\n"+
		"echo 'module.exports = 1' > lambdas/node_modules/x/index.js &&\n"+
		"chmod -R 777 node_modules lambdas/node_modules\n", 0o755) // as a hostile install could
	o.SynthCommand = `test -f lambdas/node_modules/x/index.js || ` +
		`{ echo "error TS2307: Cannot find module 'x'"; exit 1; }; ` + shellApp
	return o
}

// What an install script puts below the app is kept by the dependency cache with the app's own
// node_modules, and is where the app looks for it when the next revision synthesizes from the
// cache: a `postinstall` that installs lambdas/ used to leave every later synthesis without
// lambdas/node_modules.
func TestCacheKeepsWhatInstallScriptsWroteBelowTheApp(t *testing.T) {
	first := postinstallCheckout(t, `{"lockfileVersion": 3, "name": "lambdas"}`)
	var log strings.Builder
	first.Log = &log
	if err := Run(context.Background(), first); err != nil || !strings.Contains(log.String(), "npm ran") {
		t.Fatalf("first synthesis: %v\n%s", err, log.String())
	}
	next := postinstallCheckout(t, `{"lockfileVersion": 3, "name": "lambdas"}`)
	next.CacheDir = first.CacheDir
	log.Reset()
	next.Log = &log
	if err := Run(context.Background(), next); err != nil {
		t.Fatalf("synthesis from the cache: %v\n%s", err, log.String())
	}
	if strings.Contains(log.String(), "npm ran") || !strings.Contains(log.String(), "dependencies from the cache") {
		t.Errorf("the cache was not used:\n%s", log.String())
	}
	for _, rel := range []string{"node_modules/cdk", "lambdas/node_modules/x/index.js"} {
		if _, err := os.Stat(filepath.Join(next.Dir, rel)); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	// The sub-package's lock file keys the cache: changed, it is installed anew.
	changed := postinstallCheckout(t, `{"lockfileVersion": 3, "name": "lambdas", "version": "2.0.0"}`)
	changed.CacheDir = first.CacheDir
	log.Reset()
	changed.Log = &log
	if err := Run(context.Background(), changed); err != nil || !strings.Contains(log.String(), "npm ran") {
		t.Errorf("a changed lambdas/package-lock.json did not install anew: %v\n%s", err, log.String())
	}
}

// A revision with the same lock files but a link where a cached node_modules goes (lambdas ->
// a directory outside the checkout) does not make cdkbot write there.
func TestCacheRestoresOnlyIntoTheAppsOwnDirectories(t *testing.T) {
	first := postinstallCheckout(t, "")
	if err := Run(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	next := postinstallCheckout(t, "")
	next.CacheDir = first.CacheDir
	outside := t.TempDir()
	must(t, os.Remove(filepath.Join(next.Dir, "lambdas")))
	must(t, os.Symlink(outside, filepath.Join(next.Dir, "lambdas")))
	var log strings.Builder
	next.Log = &log
	err := Run(context.Background(), next)
	if _, statErr := os.Lstat(filepath.Join(outside, "node_modules")); statErr == nil {
		t.Errorf("cdkbot wrote through the link (err %v)", err)
	}
	if err == nil || !strings.Contains(err.Error(), "not a directory") || strings.Contains(log.String(), "npm ran") {
		t.Errorf("got %v\n%s", err, log.String())
	}
}

// As a synthesis user, what its install scripts wrote below the app is cdkbot's in the cache
// before the app runs: the app cannot plant code in lambdas/node_modules for the next revision.
func TestCachedSubPackageModulesAreCdkbots(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
	var cache string
	for rev := range 2 {
		o := postinstallCheckout(t, `{}`)
		if rev == 0 {
			cache = o.CacheDir
		}
		o.CacheDir = cache
		for d := filepath.Dir(o.Root); d != filepath.Dir(d); d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
				must(t, os.Chmod(d, fi.Mode().Perm()|0o011)) // the synthesis user passes through
			}
		}
		o.User = &Identity{UID: 61001, GID: 61001}
		o.SynthCommand = `{ echo evil > lambdas/node_modules/x/index.js; } 2>/dev/null && echo PLANT""ED; ` +
			o.SynthCommand
		var log strings.Builder
		o.Log = &log
		if err := Run(context.Background(), o); err != nil {
			t.Fatalf("revision %d: %v\n%s", rev, err, log.String())
		}
		if strings.Contains(log.String(), "PLANTED") || rev == 1 && !strings.Contains(log.String(), "from the cache") {
			t.Errorf("revision %d:\n%s", rev, log.String())
		}
	}
}

// A package.json whose install scripts change while its lock file does not (a new postinstall)
// installs anew: the cache would otherwise hand the app what the old scripts wrote.
func TestCacheIsKeyedByThePackagesScripts(t *testing.T) {
	first := postinstallCheckout(t, `{"lockfileVersion": 3, "name": "lambdas"}`)
	write(t, filepath.Join(first.Dir, "package.json"), `{"scripts": {"postinstall": "cd lambdas && npm ci"}}`, 0o644)
	if err := Run(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, file, content string }{
		{"the app's scripts", "package.json", `{"scripts": {"postinstall": "cd lambdas && npm ci && npm run build"}}`},
		{"a sub-package's scripts", "lambdas/package.json", `{"scripts": {"prepare": "tsc"}}`},
	} {
		next := postinstallCheckout(t, `{"lockfileVersion": 3, "name": "lambdas"}`)
		write(t, filepath.Join(next.Dir, "package.json"), `{"scripts": {"postinstall": "cd lambdas && npm ci"}}`, 0o644)
		write(t, filepath.Join(next.Dir, c.file), c.content, 0o644)
		next.CacheDir = first.CacheDir
		var log strings.Builder
		next.Log = &log
		if err := Run(context.Background(), next); err != nil || !strings.Contains(log.String(), "npm ran") {
			t.Errorf("%s changed, the install was not run again: %v\n%s", c.name, err, log.String())
		}
	}
	same := postinstallCheckout(t, `{"lockfileVersion": 3, "name": "lambdas"}`)
	write(t, filepath.Join(same.Dir, "package.json"), `{"scripts": {"postinstall": "cd lambdas && npm ci"}}`, 0o644)
	same.CacheDir = first.CacheDir
	var log strings.Builder
	same.Log = &log
	if err := Run(context.Background(), same); err != nil || strings.Contains(log.String(), "npm ran") {
		t.Errorf("the same package.json installed anew: %v\n%s", err, log.String())
	}
}
