package compat

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

func fixture(t *testing.T, rel string) *assembly.Assembly {
	t.Helper()
	a, err := assembly.Load(os.DirFS("../../compat-fixtures/"+rel), rel)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func find(t *testing.T, checks []Check, name string) Check {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, checks)
	return Check{}
}

type deployedFake map[string]int

func (d deployedFake) DeployedBootstrapVersion(env assembly.Environment, _ string) (int, bool, error) {
	if env.Account == "999999999999" {
		return 0, false, errors.New("access denied")
	}
	v, ok := d[env.String()]
	return v, ok, nil
}

func TestV1ToV2Migration(t *testing.T) {
	t.Parallel()
	checks := CheckAssemblies(AssemblyInput{Base: fixture(t, "aws-cdk-core@1.204.0/multi-env"), Head: fixture(t, "aws-cdk-lib@2.0.0/multi-env"), ToolSchemaMax: 55})
	if c := find(t, checks, "mode"); c.Status != Warn || !strings.Contains(c.Action, "cdk bootstrap") {
		t.Errorf("mode: %+v", c)
	}
	if c := find(t, checks, "framework"); c.Status != Warn || !strings.Contains(c.Finding, "@aws-cdk/core 1.204.0 to aws-cdk-lib 2.0.0") || !strings.Contains(c.Action, "v1 → v2") {
		t.Errorf("framework: %+v", c)
	}
	if c := find(t, checks, "bootstrap aws://111111111111/us-east-1"); c.Status != Warn || !strings.Contains(c.Action, "cdk bootstrap aws://111111111111/us-east-1") {
		t.Errorf("bootstrap: %+v", c)
	}
	if Worst(checks) != Warn {
		t.Errorf("worst %s", Worst(checks))
	}
}

func TestMinorUpgradeWithOutdatedCLI(t *testing.T) {
	t.Parallel()
	in := AssemblyInput{Base: fixture(t, "aws-cdk-lib@2.200.0/multi-env"), Head: fixture(t, "aws-cdk-lib@2.276.0/multi-env"), ToolSchemaMax: 55,
		Repo: RepoFacts{CLIVersion: "2.1000.0", CLISource: "package-lock.json"}}
	checks := CheckAssemblies(in)
	if c := find(t, checks, "cli"); c.Status != Fail || c.Action != "Upgrade aws-cdk to ≥ 2.1148.2 in package.json" {
		t.Errorf("cli: %+v", c)
	}
	if c := find(t, checks, "framework"); c.Status != Pass || !strings.Contains(c.Finding, "aws-cdk-lib 2.200.0 → 2.276.0 (minor); schema 44.0.0 → 55.0.0") {
		t.Errorf("framework: %+v", c)
	}
	if c := find(t, checks, "mode"); c.Status != Pass {
		t.Errorf("mode: %+v", c)
	}
	// 44.0.0 is between the embedded releases: the changes cannot be named.
	if c := find(t, checks, "schema"); !strings.Contains(c.Finding, "not in cdkbot's schema history") {
		t.Errorf("schema: %+v", c)
	}
	if c := find(t, CheckAssemblies(AssemblyInput{Base: fixture(t, "aws-cdk-lib@2.100.0/multi-env"), Head: fixture(t, "aws-cdk-lib@2.276.0/multi-env"), ToolSchemaMax: 55}), "schema"); !strings.Contains(c.Finding, "schema 34.0.0 → 55.0.0:") || !strings.Contains(c.Finding, "requiring a major bump") {
		t.Errorf("schema 34 → 55: %+v", c)
	}
	in.Repo.CLIVersion = "2.1148.2"
	if c := find(t, CheckAssemblies(in), "cli"); c.Status != Pass {
		t.Errorf("cli with a recent CLI: %+v", c)
	}
	// Older than minimumCliVersion but of the same schema major (2.1146.0 was built with schema
	// 55.1.0, the head is 55.0.0): the CLI reads it, so it passes; 2.1133.0 (schema 54) does not.
	in.Repo.CLIVersion = "2.1146.0"
	if c := find(t, CheckAssemblies(in), "cli"); c.Status != Pass || !strings.Contains(c.Finding, "reads cloud assembly schema 55.x (built with 55.1.0)") {
		t.Errorf("cli of the same schema major: %+v", c)
	}
	in.Repo.CLIVersion = "2.1133.0"
	if c := find(t, CheckAssemblies(in), "cli"); c.Status != Fail {
		t.Errorf("cli of an older schema major: %+v", c)
	}
	// A framework without minimumCliVersion is compared with the framework version.
	in.Head, in.Repo.CLIVersion = fixture(t, "aws-cdk-lib@2.100.0/multi-env"), "2.50.0"
	if c := find(t, CheckAssemblies(in), "cli"); c.Status != Fail || !strings.Contains(c.Finding, "the framework version 2.100.0") {
		t.Errorf("cli against the framework version: %+v", c)
	}
}

func TestToolkitTooOld(t *testing.T) {
	t.Parallel()
	c := find(t, CheckAssemblies(AssemblyInput{Head: fixture(t, "aws-cdk-lib@2.276.0/multi-env"), ToolSchemaMax: 50}), "toolkit")
	if c.Status != Fail || !strings.Contains(c.Action, "Upgrade cdkbot") {
		t.Errorf("toolkit: %+v", c)
	}
}

func TestDeployedBootstrapVersions(t *testing.T) {
	t.Parallel()
	head := fixture(t, "aws-cdk-lib@2.276.0/multi-env")
	checks := CheckAssemblies(AssemblyInput{Base: head, Head: head, ToolSchemaMax: 55,
		Deployed: deployedFake{"aws://111111111111/us-east-1": 30}})
	if c := find(t, checks, "bootstrap aws://111111111111/us-east-1"); c.Status != Pass || !strings.Contains(c.Finding, "version 30 is deployed") {
		t.Errorf("bootstrapped: %+v", c)
	}
	if c := find(t, checks, "bootstrap aws://222222222222/eu-west-1"); c.Status != Fail || !strings.Contains(c.Finding, "not bootstrapped") ||
		c.Action != "Run `cdk bootstrap aws://222222222222/eu-west-1` before merging" {
		t.Errorf("not bootstrapped: %+v", c)
	}
	if c := find(t, checks, "bootstrap aws://unknown-account/unknown-region"); c.Status != Pass {
		t.Errorf("environment-agnostic stacks cannot be looked up: %+v", c)
	}
	checks = CheckAssemblies(AssemblyInput{Base: head, Head: head, ToolSchemaMax: 55, Deployed: deployedFake{"aws://111111111111/us-east-1": 5}})
	if c := find(t, checks, "bootstrap aws://111111111111/us-east-1"); c.Status != Fail || !strings.Contains(c.Finding, "version 5 is deployed") {
		t.Errorf("old bootstrap: %+v", c)
	}
}

func TestFeatureFlagChanges(t *testing.T) {
	t.Parallel()
	a := fixture(t, "aws-cdk-lib@2.276.0/multi-env")
	checks := CheckAssemblies(AssemblyInput{Base: a, Head: a, ToolSchemaMax: 55,
		Repo: RepoFacts{Context: map[string]any{"@aws-cdk/core:newStyleStackSynthesis": false, "unrelated": 1}}})
	c := find(t, checks, "feature flags")
	if c.Status != Warn || !strings.Contains(c.Finding, "@aws-cdk/core:newStyleStackSynthesis: true → false") {
		t.Errorf("flags: %+v", c)
	}
	if c := find(t, CheckAssemblies(AssemblyInput{Base: a, Head: a, ToolSchemaMax: 55}), "feature flags"); c.Status != Pass {
		t.Errorf("unchanged flags: %+v", c)
	}
}

// Every compat fixture from an old framework, as the base of a PR that upgrades to today's
// framework, yields its checks: the toolkit reads the head, the framework change is named, and
// a move from legacy to modern synthesis is flagged.
func TestCompatFixturesAgainstToday(t *testing.T) {
	t.Parallel()
	today := "aws-cdk-lib@2.276.0"
	for _, old := range []string{"aws-cdk-core@1.20.0", "aws-cdk-core@1.100.0", "aws-cdk-core@1.204.0", "aws-cdk-lib@2.0.0",
		"aws-cdk-lib@2.50.0", "aws-cdk-lib@2.100.0", "aws-cdk-lib@2.200.0"} {
		for _, app := range []string{"multi-env", "large-template"} {
			base := fixture(t, old+"/"+app)
			checks := CheckAssemblies(AssemblyInput{Base: base, Head: fixture(t, today+"/"+app), ToolSchemaMax: 55})
			if c := find(t, checks, "toolkit"); c.Status != Pass {
				t.Errorf("%s %s: %+v", old, app, c)
			}
			if c := find(t, checks, "framework"); !strings.Contains(c.Finding, "2.276.0") {
				t.Errorf("%s %s framework: %+v", old, app, c)
			}
			if c := find(t, checks, "mode"); (base.Mode() == assembly.ModeLegacy) != (c.Status == Warn) {
				t.Errorf("%s %s mode: %+v", old, app, c)
			}
		}
	}
}

// An environment-agnostic stack in an environment the base did not have is bootstrapped where
// the deploy's credentials point: the advice is plain `cdk bootstrap`, never a command naming
// aws://unknown-account/unknown-region, which cannot run.
func TestBootstrapAdviceForAgnosticStacks(t *testing.T) {
	t.Parallel()
	checks := CheckAssemblies(AssemblyInput{Base: fixture(t, "aws-cdk-core@1.204.0/multi-env"),
		Head: fixture(t, "aws-cdk-lib@2.276.0/multi-env"), ToolSchemaMax: 55})
	c := find(t, checks, "bootstrap aws://unknown-account/unknown-region")
	if strings.Contains(c.Action, "unknown-account") || !strings.Contains(c.Action, "`cdk bootstrap` with") {
		t.Errorf("agnostic bootstrap advice: %+v", c)
	}
}
