package cli

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
)

// stackApp synthesizes one stack whose resources are named by the lines of resources.txt (and of
// ../shared/extra.txt when it exists: an app that reads outside its directory), and says in its
// output that it ran.
const stackApp = `const fs = require('fs'), path = require('path');
let names = fs.readFileSync('resources.txt', 'utf8').split('\n').filter(Boolean);
if (fs.existsSync('READS_SHARED')) names = names.concat(fs.readFileSync('../shared/extra.txt', 'utf8').split('\n').filter(Boolean));
const Resources = {};
for (const n of names) Resources[n] = { Type: 'AWS::SQS::Queue' };
fs.writeFileSync(path.join(process.env.CDK_OUTDIR, 'manifest.json'), JSON.stringify({ version: '36.0.0', artifacts: { App: {
  type: 'aws:cloudformation:stack', environment: 'aws://123456789012/us-east-1', properties: { templateFile: 'App.template.json' } } } }));
fs.writeFileSync(path.join(process.env.CDK_OUTDIR, 'App.template.json'), JSON.stringify({ Resources }));
console.log('app ran: ' + names.join(',') + (process.env.CDK_VALIDATION === 'false' ? ' (unvalidated)' : ''));
`

// newAppRepo makes an empty repository for an app in its infra/ directory, with a cache of its
// own; it skips the test without node.
func newAppRepo(t *testing.T) (dir, app string) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir = t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	return dir, filepath.Join(dir, "infra")
}

// An assembly is reused while what its synthesis reads is unchanged, whatever else the commits
// touch; what it reads is exactly what is checked out, so an app that reads more fails loudly
// until it names those files, instead of being reused stale.
func TestSynthesisIsCachedByWhatItReads(t *testing.T) {
	dir, app := newAppRepo(t)
	base := gitcli.Commit(t, dir, "app", map[string]string{"infra/cdk.json": `{"app": "node app.js"}`, "infra/app.js": stackApp,
		"infra/resources.txt": "Orders\n", "README.md": "one", "shared/extra.txt": "Audit\n"})
	docs := gitcli.Commit(t, dir, "docs", map[string]string{"README.md": "two", "shared/extra.txt": "Other\n"})
	ran := func(stderr string) int { return strings.Count(stderr, "app ran:") }

	// Cold: the docs-only head has the base's inputs, so one synthesis serves both.
	code, stdout, stderr := run(t, "review", "--repo", app, "--base", base, "--head", docs, "--no-color")
	if code != ExitOK || ran(stderr) != 1 || !strings.Contains(stderr, "same inputs as the base") || !strings.Contains(stdout, "no changes") {
		t.Fatalf("docs-only head: exit %d, %d runs\n%s\n%s", code, ran(stderr), stdout, stderr)
	}
	// The cached assembly is readable by others (actions/cache saves it as the runner's user).
	filepath.WalkDir(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "cdkbot", "assemblies"), func(p string, d fs.DirEntry, err error) error {
		if fi, _ := os.Lstat(p); err == nil && fi.Mode().Perm()&0o004 == 0 {
			t.Errorf("%s is mode %v", p, fi.Mode())
		}
		return err
	})
	// Warm: nothing runs at all.
	code, _, stderr = run(t, "review", "--repo", app, "--base", base, "--head", docs, "--no-color")
	if code != ExitOK || ran(stderr) != 0 || strings.Count(stderr, "reused the assembly synthesized from the same inputs") != 2 {
		t.Fatalf("warm: exit %d, %d runs\n%s", code, ran(stderr), stderr)
	}
	// The same app named relatively (--repo infra from the repository's root) is the same app.
	t.Chdir(dir)
	code, _, stderr = run(t, "review", "--repo", "infra", "--base", base, "--head", docs, "--no-color")
	if code != ExitOK || ran(stderr) != 0 || strings.Count(stderr, "none of infra/") != 2 {
		t.Fatalf("relative --repo: exit %d, %d runs\n%s", code, ran(stderr), stderr)
	}
	if os.Geteuid() == 0 {
		// As the action runs it: a synthesis user each, the app in a subdirectory of its checkout.
		cache := t.TempDir()
		os.Chmod(cache, 0o711)
		os.Chmod(filepath.Dir(cache), 0o711)
		t.Setenv("XDG_CACHE_HOME", cache)
		code, stdout, stderr = run(t, "review", "--repo", app, "--base", base, "--head", docs, "--no-color", "--synth-user", "61002,61003")
		if code != ExitOK || ran(stderr) != 1 || !strings.Contains(stdout, "no changes") {
			t.Fatalf("as synthesis users: exit %d, %d runs\n%s\n%s", code, ran(stderr), stdout, stderr)
		}
	}
	// An app change: the base is reused, the head synthesized.
	queue := gitcli.Commit(t, dir, "queue", map[string]string{"infra/resources.txt": "Orders\nPayments\n"})
	code, stdout, stderr = run(t, "review", "--repo", app, "--base", base, "--head", queue, "--no-color")
	if code != ExitOK || ran(stderr) != 1 || !strings.Contains(stderr, "app ran: Orders,Payments") || !strings.Contains(stdout, "Payments") {
		t.Fatalf("app change: exit %d, %d runs\n%s\n%s", code, ran(stderr), stdout, stderr)
	}
	// The app starts reading ../shared: not checked out, so it fails and says what to do.
	shared := gitcli.Commit(t, dir, "read shared", map[string]string{"infra/READS_SHARED": ""})
	code, _, stderr = run(t, "review", "--repo", app, "--base", base, "--head", shared, "--no-color")
	if code == ExitOK || !strings.Contains(stderr, "--synth-inputs") || !strings.Contains(stderr, "infra/ (with the workspace files above it)") {
		t.Fatalf("reads outside: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = run(t, "review", "--repo", app, "--base", base, "--head", shared, "--no-color", "--synth-inputs", "shared")
	if code != ExitOK || !strings.Contains(stdout, "Other") {
		t.Fatalf("with --synth-inputs: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// And a change there is a change of the app: not reused.
	changed := gitcli.Commit(t, dir, "shared change", map[string]string{"shared/extra.txt": "Ledger\n"})
	code, stdout, stderr = run(t, "review", "--repo", app, "--base", shared, "--head", changed, "--no-color", "--synth-inputs", "shared")
	if code != ExitVerdict || ran(stderr) != 1 || !strings.Contains(stdout, "[+] create      AWS::SQS::Queue Ledger") {
		t.Fatalf("shared change: exit %d, %d runs\n%s\n%s", code, ran(stderr), stdout, stderr)
	}
}

// The base is synthesized without aws-cdk-lib's template validation (nobody acts on what it finds
// in merged code), the head with it; so a head never reuses an unvalidated assembly, while a base
// reuses either, and one synthesis serving both sides is validated.
func TestOnlyTheHeadIsValidated(t *testing.T) {
	dir, app := newAppRepo(t)
	runs := func(stderr string) []string {
		var out []string
		for _, l := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(l, "app ran: ") {
				out = append(out, strings.TrimPrefix(l, "app ran: "))
			}
		}
		return out
	}
	review := func(base, head string, want ...string) {
		t.Helper()
		code, stdout, stderr := run(t, "review", "--repo", app, "--base", base, "--head", head, "--no-color")
		if got := runs(stderr); code == ExitUsage || code == ExitFailure || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("review %.7s..%.7s: exit %d, runs %q, want %q\n%s\n%s", base, head, code, got, want, stdout, stderr)
		}
	}
	orders := gitcli.Commit(t, dir, "app", map[string]string{"infra/cdk.json": `{"app": "node app.js"}`, "infra/app.js": stackApp,
		"infra/resources.txt": "Orders\n"})
	payments := gitcli.Commit(t, dir, "payments", map[string]string{"infra/resources.txt": "Orders\nPayments\n"})
	refunds := gitcli.Commit(t, dir, "refunds", map[string]string{"infra/resources.txt": "Orders\nPayments\nRefunds\n"})
	docs := gitcli.Commit(t, dir, "docs", map[string]string{"README.md": "words"})

	review(orders, payments, "Orders (unvalidated)", "Orders,Payments")
	review(payments, refunds, "Orders,Payments,Refunds") // the base reuses the head's validated assembly
	review(refunds, orders, "Orders")                    // the head does not reuse the base's unvalidated one
	review(docs, refunds)                                // both cached (validated)
	review(orders, orders)                               // the head's validated Orders serves the base too
	other := gitcli.Commit(t, dir, "other", map[string]string{"infra/resources.txt": "Ledger\n"})
	same := gitcli.Commit(t, dir, "same inputs", map[string]string{"README.md": "more words"})
	review(other, same, "Ledger") // one synthesis for both sides: validated
}

// rendezvousApp proves that base and head run at the same time without timing anything: each
// side leaves a mark and waits (up to 20 s) for the other's.
const rendezvousApp = `const fs = require('fs'), path = require('path');
const me = fs.readFileSync('side.txt', 'utf8').trim(), other = me === 'base' ? 'head' : 'base';
fs.writeFileSync(path.join(RV, me), '');
const until = Date.now() + (me === 'base' && fs.existsSync(path.join(RV, 'sequential')) ? 0 : 20000);
let met = fs.existsSync(path.join(RV, other));
while (!met && Date.now() < until) { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50); met = fs.existsSync(path.join(RV, other)); }
console.log('rendezvous: ' + (met ? 'met' : 'alone'));
fs.writeFileSync(path.join(process.env.CDK_OUTDIR, 'manifest.json'), JSON.stringify({ version: '36.0.0', artifacts: {} }));
`

// Side by side when base and head each have a synthesis user (root only); one after the other
// otherwise, since one user's head could rewrite the base while both run.
func TestBaseAndHeadSynthesizeSideBySide(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	rv, err := os.MkdirTemp("", "cdkbot-rendezvous-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rv) })
	src := strings.ReplaceAll(rendezvousApp, "RV", "'"+rv+"'")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--synth-concurrency", "1"}, []string{"rendezvous: alone"}},
		{nil, []string{"rendezvous: alone", "side by side needs a synthesis user for each"}},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			args []string
			want []string
		}{[]string{"--synth-user", "61002,61003"}, []string{"base: rendezvous: met", "head: rendezvous: met"}})
	}
	for _, tc := range cases {
		cache := t.TempDir()
		os.Chmod(cache, 0o711)
		os.Chmod(filepath.Dir(cache), 0o711)
		t.Setenv("XDG_CACHE_HOME", cache)
		entries, _ := os.ReadDir(rv)
		for _, e := range entries {
			os.Remove(filepath.Join(rv, e.Name()))
		}
		os.Chmod(rv, 0o777)
		if len(tc.args) == 0 || tc.args[0] != "--synth-user" {
			os.WriteFile(filepath.Join(rv, "sequential"), nil, 0o644)
		}
		dir := t.TempDir()
		os.Chmod(dir, 0o755)
		os.Chmod(filepath.Dir(dir), 0o711)
		gitRun(t, dir, "init", "-q", "-b", "main")
		base := gitcli.Commit(t, dir, "base", map[string]string{"cdk.json": `{"app": "node app.js"}`, "app.js": src, "side.txt": "base"})
		head := gitcli.Commit(t, dir, "head", map[string]string{"side.txt": "head"})
		code, _, stderr := run(t, append([]string{"review", "--repo", dir, "--base", base, "--head", head, "--no-color"}, tc.args...)...)
		for _, w := range tc.want {
			if code != ExitOK || !strings.Contains(stderr, w) {
				t.Errorf("%v: exit %d, want %q in\n%s", tc.args, code, w, stderr)
			}
		}
	}
}
