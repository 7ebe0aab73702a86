package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckCommand(t *testing.T) {
	shop := filepath.Join("demo", "before")
	dir := t.TempDir()
	policy := writeFile(t, dir, "policy.yml", `aspects:
  - use: tags
    with: { tags: { team: core } }
  - use: bucket-access-logging
  - use: require-tags
    with: { keys: [team] }
`)
	strict := writeFile(t, dir, "strict.yml", "aspects:\n  - use: retain-stateful\n")
	bad := writeFile(t, dir, "bad.yml", "aspects:\n  - use: tags\n    colour: red\n")
	out := filepath.Join(dir, "mutated")
	cases := []cliCase{
		{"mutations pass", []string{"check", shop, "--config", policy, "--write", out}, ExitOK,
			[]string{"0 error(s)", "added tag team=core", "added access-log bucket CdkbotAccessLogsBucket"}, nil},
		{"violations fail", []string{"check", shop, "--config", strict}, ExitVerdict, []string{"error", "retain-stateful", "DeletionPolicy: Delete"}, nil},
		{"json", []string{"check", shop, "--config", strict, "--format", "json"}, ExitVerdict, []string{`"rule": "retain-stateful"`, `"passes": 2`}, nil},
		{"markdown", []string{"check", shop, "--config", policy, "--format", "markdown"}, ExitOK, []string{"#### Policy: 0 error(s)", "Mutating aspects changed the templates"}, nil},
		{"bad config", []string{"check", shop, "--config", bad}, ExitUsage, nil, []string{"bad.yml", `unknown key "colour"`}},
		{"missing config given", []string{"check", shop, "--config", filepath.Join(dir, "nope.yml")}, ExitUsage, nil, []string{"nope.yml"}},
		{"write over an existing dir", []string{"check", shop, "--config", policy, "--write", dir}, ExitUsage, nil, []string{"the directory exists"}},
		{"no stabilization", []string{"check", shop, "--config", policy, "--no-stabilization"}, ExitOK, []string{"1 pass(es)"}, nil},
	}
	runCases(t, cases)
	// The written assembly loads, and a diff against the original shows exactly the mutations.
	code, stdout, stderr := run(t, "diff", shop, out, "--format", "json")
	if code != ExitOK || !strings.Contains(stdout, `"logicalId":"CdkbotAccessLogsBucket","impact":"create"`) {
		t.Errorf("diff of the written assembly: %d %s %s", code, stdout[:min(len(stdout), 500)], stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); err != nil {
		t.Error(err)
	}
	// Without a configuration nothing runs and nothing changes.
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code, stdout, stderr = run(t, "check", filepath.Join(wd, shop))
	if code != ExitOK || !strings.Contains(stderr, "no policy configured") || !strings.Contains(stdout, "0 change(s)") {
		t.Errorf("no config: %d %s %s", code, stdout, stderr)
	}
}
