package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostileApp synthesizes the stack Data; with DROP_TABLE in the checkout it leaves out the table
// and then rewrites every Data.template.json it can reach near its own output (the base's
// assembly among them) to match, so the destroy would look like "no changes".
const hostileApp = `const fs = require('fs'), path = require('path');
const out = process.env.CDK_OUTDIR, hostile = fs.existsSync('DROP_TABLE');
const resources = { Bucket: { Type: 'AWS::S3::Bucket' } };
if (!hostile) resources.Table = { Type: 'AWS::DynamoDB::Table', Properties: { KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
  AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }], BillingMode: 'PAY_PER_REQUEST' } };
const template = JSON.stringify({ Resources: resources });
fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify({ version: '36.0.0', artifacts: { Data: {
  type: 'aws:cloudformation:stack', environment: 'aws://123456789012/us-east-1', properties: { templateFile: 'Data.template.json' } } } }));
fs.writeFileSync(path.join(out, 'Data.template.json'), template);
if (hostile) {
  const walk = dir => { let names = []; try { names = fs.readdirSync(dir); } catch (e) { return; }
    for (const n of names) { const p = path.join(dir, n);
      if (n === 'Data.template.json') { try { fs.writeFileSync(p, template); } catch (e) {} }
      else { try { if (fs.lstatSync(p).isDirectory()) walk(p); } catch (e) {} } } };
  walk(path.dirname(out));
  if (process.env.CDK_PROBE_CACHE) walk(process.env.CDK_PROBE_CACHE);
  if (fs.existsSync('FAIL_AFTER')) process.exit(1); // and hope the tainted base is cached for later
}
`

// A head whose app rewrites the base's assembly cannot turn a destroyed table into "no changes":
// as the same user the rewrite is detected and the review fails; as a synthesis user (root) it
// is denied and the honest review blocks the destroy.
func TestHeadCannotRewriteTheBase(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "cdk.json"), []byte(`{"app": "node app.js"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "app.js"), []byte(hostileApp), 0o644)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "bucket and table")
	base := gitRun(t, dir, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "DROP_TABLE"), nil, 0o644)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "drop the table, quietly")
	head := gitRun(t, dir, "rev-parse", "HEAD")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("CDK_PROBE_CACHE", cache)

	code, stdout, stderr := run(t, "review", "--repo", dir, "--base", base, "--head", head, "--no-color")
	if code == ExitOK || !strings.Contains(stderr, "changed while the head was synthesized") {
		t.Errorf("same user: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The tainted base is not reused from the cache: the next run synthesizes it again and, the
	// head's assembly now coming from the cache, shows the honest destroy.
	code, stdout, stderr = run(t, "review", "--repo", dir, "--base", base, "--head", head, "--no-color")
	if code != ExitVerdict || !strings.Contains(stdout, "Table") {
		t.Errorf("same user, again: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A head that rewrites the base and then fails is caught too (not just "the head failed").
	os.WriteFile(filepath.Join(dir, "FAIL_AFTER"), nil, 0o644)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "rewrite the base, then fail")
	failing := gitRun(t, dir, "rev-parse", "HEAD")
	code, stdout, stderr = run(t, "review", "--repo", dir, "--base", base, "--head", failing, "--no-color")
	if code == ExitOK || !strings.Contains(stderr, "changed while the head was synthesized") {
		t.Errorf("failing head: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if os.Geteuid() != 0 {
		return
	}
	os.Chmod(cache, 0o711)
	os.Chmod(filepath.Dir(cache), 0o711)
	os.RemoveAll(filepath.Join(cache, "cdkbot")) // the base is synthesized again, as the synthesis user
	// The attacker knows where the base's cached assembly is (its key is made of public git ids).
	t.Setenv("CDK_PROBE_CACHE", filepath.Join(cache, "cdkbot", "assemblies"))
	code, stdout, stderr = run(t, "review", "--repo", dir, "--base", base, "--head", head, "--no-color", "--synth-user", "61002,61003")
	if code != ExitVerdict || !strings.Contains(stdout, "Table") || !strings.Contains(stdout, "✗ gate") {
		t.Errorf("synthesis user: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
