package pipeline

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
)

// excludeApp synthesizes one stack whose queues are named by the lines of resources.txt, and,
// once READS_DOCS exists, of docs/queues.txt too: an app that reads a file the defaults exclude.
const excludeApp = `const fs = require('fs'), path = require('path');
let names = fs.readFileSync('resources.txt', 'utf8').split('\n').filter(Boolean);
if (fs.existsSync('READS_DOCS')) names = names.concat(fs.readFileSync('docs/queues.txt', 'utf8').split('\n').filter(Boolean));
const Resources = {};
for (const n of names) Resources[n] = { Type: 'AWS::SQS::Queue' };
fs.writeFileSync(path.join(process.env.CDK_OUTDIR, 'manifest.json'), JSON.stringify({ version: '36.0.0', artifacts: { App: {
  type: 'aws:cloudformation:stack', environment: 'aws://123456789012/us-east-1', properties: { templateFile: 'App.template.json' } } } }));
fs.writeFileSync(path.join(process.env.CDK_OUTDIR, 'App.template.json'), JSON.stringify({ Resources }));
console.log('app ran: ' + names.join(','));
`

// An app whose cdk.json is at the repository's root: a commit that changes only documentation
// reuses the head's synthesis; an app that reads an excluded file fails and says so (it is not
// checked out) instead of being reused stale; once synth.exclude lets the file in, a change to
// it is a change of the app.
func TestSynthesisLeavesOutWhatTheAppDoesNotRead(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	if _, err := gitrepo.Init(dir); err != nil {
		t.Fatal(err)
	}
	base := gitcli.Commit(t, dir, "app", map[string]string{"cdk.json": `{"app": "node app.js"}`, "app.js": excludeApp,
		"resources.txt": "Orders\n", "README.md": "one", "docs/queues.txt": "Audit\n", ".github/workflows/ci.yml": "on: push\n"})
	review := func(base, head string) (string, error) {
		t.Helper()
		var log bytes.Buffer
		opts := DefaultReviewOptions()
		opts.Repo, opts.Base, opts.Head, opts.Log, opts.Deployed, opts.AssemblyDir = dir, base, head, &log, "off", "cdk.out"
		rep, cleanup, err := Review(context.Background(), opts)
		defer cleanup()
		if err == nil && rep == nil {
			t.Fatal("no report")
		}
		return log.String(), err
	}
	ran := func(log string) int { return strings.Count(log, "app ran:") }

	docs := gitcli.Commit(t, dir, "docs", map[string]string{"README.md": "two", "docs/queues.txt": "Other\n",
		".github/workflows/ci.yml": "on: pull_request\n"})
	log, err := review(base, docs)
	if err != nil || ran(log) != 1 || !strings.Contains(log, "same inputs as the base") {
		t.Fatalf("docs-only commit of a root app: %v, %d runs\n%s", err, ran(log), log)
	}
	again := gitcli.Commit(t, dir, "more docs", map[string]string{"README.md": "three"})
	if log, err = review(docs, again); err != nil || ran(log) != 0 || strings.Count(log, "reused the assembly") != 2 {
		t.Fatalf("warm docs-only commit: %v, %d runs\n%s", err, ran(log), log)
	}

	// The app starts reading docs/, which the defaults leave out: detected, not reused stale.
	reads := gitcli.Commit(t, dir, "read docs", map[string]string{"READS_DOCS": ""})
	log, err = review(base, reads)
	if err == nil || !strings.Contains(err.Error(), "synth.exclude") || !strings.Contains(err.Error(), "docs/queues.txt") {
		t.Fatalf("an app reading an excluded file: %v\n%s", err, log)
	}

	// synth.exclude without docs/: the file is checked out, and its changes are the app's.
	config := gitcli.Commit(t, dir, "config", map[string]string{".cdkbot.yml": "synth:\n  exclude: ['/*.md']\n"})
	if log, err = review(base, config); err != nil || !strings.Contains(log, "app ran: Orders,Other") {
		t.Fatalf("with docs/ let in: %v\n%s", err, log)
	}
	changed := gitcli.Commit(t, dir, "queue in docs", map[string]string{"docs/queues.txt": "Ledger\n"})
	if log, err = review(config, changed); err != nil || !strings.Contains(log, "app ran: Orders,Ledger") {
		t.Fatalf("a change of a file let in: %v\n%s", err, log)
	}
}
