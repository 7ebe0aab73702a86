package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

// outsideSecret is a file of cdkbot's user (root's alone, when the tests run as root) outside any
// checkout, whose keys and values must never reach the app, the log or a comment.
func outsideSecret(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The default .cdkbot.yml is a file of the checkout of the current directory: a link out of it
// is refused by name, and the keys of the file it names are not echoed (they were: "unknown key
// github_token"). A file the user names with --config is read wherever it is.
func TestDefaultConfigIsReadInsideTheCheckout(t *testing.T) {
	secret := outsideSecret(t, "root.yml", "github_token: ghp_topsecret\n")
	dir := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(dir, ".cdkbot.yml")); err != nil {
		t.Fatal(err)
	}
	assembly, _ := filepath.Abs(filepath.Join("demo", "after"))
	t.Chdir(dir)
	code, stdout, stderr := run(t, "check", assembly)
	if code != ExitUsage || strings.Contains(stdout+stderr, "github_token") ||
		!strings.Contains(stderr, ".cdkbot.yml is, or goes through, a symbolic link that leads out of the checkout") {
		t.Errorf("default config linked out: exit %d\n%s\n%s", code, stdout, stderr)
	}
	named := outsideSecret(t, "mine.yml", "stabilization: false\n")
	if code, stdout, stderr := run(t, "check", "--config", named, assembly); code != ExitOK {
		t.Errorf("--config outside any checkout: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// linkedRepo makes a repository whose base has an assembly with a bucket and whose head (the
// pull request) adds a queue and the symbolic link name -> target; the action reviews it with
// the head checked out, synthesizing the head with synth (its committed cdk.out copied).
func linkedRepo(t *testing.T, srv *ghserver.Server, name, target, synth string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	base := commitAssembly(t, dir, "bucket", "Bucket")
	if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	head := commitAssembly(t, dir, "a queue, and a link", "Bucket", "Queue")
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "synchronize", head, base))
	t.Setenv("INPUT_WORKING-DIRECTORY", dir)
	t.Setenv("INPUT_BASE-ASSEMBLY", "")
	t.Setenv("INPUT_HEAD-ASSEMBLY", "")
	t.Setenv("INPUT_SYNTH-COMMAND", synth)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("GITHUB_SHA", head)
	return dir
}

// A pull request that commits links out of the checkout gets nothing from cdkbot's files:
// cdk.context.json -> a root-only file does not reach the app in CDK_CONTEXT_JSON; .cdkbot.yml
// -> one has its keys kept out of the log; package-lock.json -> /dev/zero no longer ends cdkbot
// with "fatal error: out of memory" and nothing said. Each run fails closed, saying which file
// and why, and posts no review made without it.
func TestActionRefusesLinksOutOfTheCheckout(t *testing.T) {
	copyOut := `cp -R cdk.out/. "$CDK_OUTDIR"`
	for _, c := range []struct {
		name, link, content, synth string
	}{
		{name: "context", link: "cdk.context.json", content: `{"db-password": "s3cr3t-of-root"}`,
			synth: copyOut + `; printf '%s' "$CDK_CONTEXT_JSON" > "$CDK_PROBE_LEAK"`},
		{name: "config", link: ".cdkbot.yml", content: "github_token: s3cr3t-of-root\n", synth: copyOut},
		{name: "lock file", link: "package-lock.json", synth: copyOut},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := ghserver.New(t, actionToken)
			target := "/dev/zero"
			if c.content != "" {
				target = outsideSecret(t, "root-only", c.content)
			}
			linkedRepo(t, srv, c.link, target, c.synth)
			leak := filepath.Join(t.TempDir(), "leak")
			t.Setenv("CDK_PROBE_LEAK", leak)
			// npm, should the lock file make cdkbot install: a stub that does nothing.
			bin := t.TempDir()
			if err := os.WriteFile(filepath.Join(bin, "npm"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			start := time.Now()
			code, stdout, stderr := run(t, "action")
			leaked, _ := os.ReadFile(leak)
			all := stdout + stderr + string(leaked) + srv.Body(42)
			if strings.Contains(all, "s3cr3t") || strings.Contains(all, "github_token") {
				t.Fatalf("the secret got out: CDK_CONTEXT_JSON %q\n%s\n%s\ncomment:\n%s", leaked, stdout, stderr, srv.Body(42))
			}
			if code != ExitUsage || !strings.Contains(stdout+stderr, c.link+" is, or goes through, a symbolic link that leads out of the checkout") ||
				srv.Body(42) != "" || time.Since(start) > time.Minute {
				t.Errorf("exit %d after %v\n%s\n%s\ncomment:\n%s", code, time.Since(start), stdout, stderr, srv.Body(42))
			}
		})
	}
}
