package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// The plan of real assemblies as text and as GitHub Actions matrices; every stage's stacks
// depend only on stacks of earlier stages.
func TestPlanCommand(t *testing.T) {
	for _, c := range []struct{ fixture, name string }{
		{"aws-cdk-lib@2.276.0/deploy-graph", "deploy-graph"},
		{"aws-cdk-lib@2.276.0/multi-env", "multi-env"},
		{"aws-cdk-core@1.204.0/multi-env", "multi-env-v1"},
	} {
		code, stdout, stderr := run(t, "plan", fixture(t, c.fixture), "--region", "us-east-1")
		if code != ExitOK {
			t.Fatalf("%s: exit %d %s", c.name, code, stderr)
		}
		golden.Assert(t, "testdata/plan/"+c.name+".txt", []byte(stdout))
		code, stdout, stderr = run(t, "plan", fixture(t, c.fixture), "--region", "us-east-1", "--format", "github-matrix")
		if code != ExitOK {
			t.Fatalf("%s matrix: exit %d %s", c.name, code, stderr)
		}
		golden.Assert(t, "testdata/plan/"+c.name+".matrix.json", []byte(stdout))
		var m struct {
			Stages []struct {
				Include []struct{ Stack string }
			}
			StageCount int
		}
		if err := json.Unmarshal([]byte(stdout), &m); err != nil || m.StageCount != len(m.Stages) || m.StageCount == 0 {
			t.Errorf("%s: %v %+v", c.name, err, m)
		}
		code, stdout, _ = run(t, "plan", fixture(t, c.fixture), "--format", "json")
		var j struct {
			Deploy struct{ Stacks []struct{ ID string } }
		}
		if err := json.Unmarshal([]byte(stdout), &j); code != ExitOK || err != nil || len(j.Deploy.Stacks) == 0 {
			t.Errorf("%s json: exit %d\n%s", c.name, code, stdout)
		}
	}
	// A single-line matrix, whatever the assembly, so it fits $GITHUB_OUTPUT as name=value.
	_, stdout, _ := run(t, "plan", fixture(t, "aws-cdk-lib@2.276.0/deploy-graph"), "--format", "github-matrix")
	if strings.Count(stdout, "\n") != 1 || !strings.HasSuffix(stdout, "}\n") {
		t.Errorf("matrix is not one line: %q", stdout)
	}
}

// Waves from the configuration file's deploy section; --wave wins; a bad section names the
// file and line.
func TestPlanWavesFromConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), ".cdkbot.yml")
	os.WriteFile(cfg, []byte("deploy:\n  waves: [Dns]\n"), 0o644)
	first := func(args ...string) string {
		code, stdout, stderr := run(t, append([]string{"plan", fixture(t, "aws-cdk-lib@2.276.0/deploy-graph"), "--format", "github-matrix"}, args...)...)
		var m struct {
			Stages []struct {
				Include []struct{ Stack string }
			}
		}
		if err := json.Unmarshal([]byte(stdout), &m); code != ExitOK || err != nil {
			t.Fatalf("exit %d %v %s", code, err, stderr)
		}
		var ids []string
		for _, j := range m.Stages[0].Include {
			ids = append(ids, j.Stack)
		}
		return strings.Join(ids, " ")
	}
	if got := first("--config", cfg); got != "Dns" {
		t.Errorf("config waves: first stage %q", got)
	}
	if got := first("--config", cfg, "--wave", "Network"); got != "Network" {
		t.Errorf("--wave wins: first stage %q", got)
	}
	if got := first(); got != "Dns Network" {
		t.Errorf("no config: first stage %q", got)
	}
	os.WriteFile(cfg, []byte("deploy:\n  wave: [Dns]\n"), 0o644)
	code, _, stderr := run(t, "plan", fixture(t, "aws-cdk-lib@2.276.0/deploy-graph"), "--config", cfg)
	if code != ExitUsage || !strings.Contains(stderr, ".cdkbot.yml: line 2: deploy.wave is not a setting") {
		t.Errorf("bad config: exit %d %s", code, stderr)
	}
}
