package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Usage and input mistakes of apps and fan-in are exit code 2 and say what to do.
func TestAppsAndFanInUsage(t *testing.T) {
	repo, base := monorepo(t)
	notJSON := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(notJSON, []byte("matrix=…"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, ".cdkbot.yml"), []byte("apps:\n  lists: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "commit", "-qam", "a typo in the apps section")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"apps", "--format", "yaml"}, "must be one of"},
		{[]string{"apps", "--repo", t.TempDir()}, "repository"},
		{[]string{"apps", "--repo", repo, "--base", base, "--head", "nosuch"}, "--head"},
		{[]string{"apps", "--repo", repo, "--base", base}, "apps.lists is not a setting"},
		{[]string{"fan-in"}, "--plan FILE and --reports DIR are both required"},
		{[]string{"fan-in", "--plan", notJSON, "--reports", broken}, "not the output of cdkbot apps"},
		{[]string{"fan-in", "--plan", filepath.Join(broken, "none"), "--reports", broken}, "no such file"},
	} {
		code, _, stderr := runTB(c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", c.args, code, ExitUsage, c.want, stderr)
		}
	}
}

// Without --post the fan-in prints the combined review and its exit code is the verdict: a
// plan with touched legs and no reports blocks; a plan that touches nothing passes.
func TestFanInLocal(t *testing.T) {
	repo, base := monorepo(t)
	writeApp(t, repo, "infra/network", "Queue", "Topic")
	gitRun(t, repo, "commit", "-qam", "network: a topic")
	head := gitRun(t, repo, "rev-parse", "HEAD")
	_, plan := fanOut(t, repo, base, head)
	code, stdout, stderr := runTB("fan-in", "--plan", plan, "--reports", t.TempDir())
	if code != ExitVerdict || !strings.Contains(stdout, "❌ infra/network · dev: missing") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	_, plan = fanOut(t, repo, head, head)
	code, stdout, stderr = runTB("fan-in", "--plan", plan, "--reports", t.TempDir(), "--format", "markdown")
	if code != ExitOK || !strings.Contains(stdout, "✅ safe · 6 app environments: 0 reviewed, 6 unchanged · no changes") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// Two workflows that fan out without --key keep their combined comments apart: the default key is
// the workflow's name, made safe for a marker.
func TestAppsDefaultKeyIsTheWorkflows(t *testing.T) {
	for workflow, want := range map[string]string{
		"":                     "default",
		"cdk review":           "cdk-review",
		"infra/<prod> --x":     "infra/-prod-x",
		"   ":                  "default",
		"\u202egnp.exe review": "-gnp.exe-review",
	} {
		if got := defaultAppsKey(workflow); got != want {
			t.Errorf("workflow %q: key %q, want %q", workflow, got, want)
		}
	}
}
