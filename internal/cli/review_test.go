package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

func TestReviewCommand(t *testing.T) {
	before, after := filepath.Join("demo", "before"), filepath.Join("demo", "after")
	dir := t.TempDir()
	policy := writeFile(t, dir, "policy.yml", "aspects:\n  - use: tags\n    with: { tags: { team: core } }\n  - use: require-tags\n    with: { keys: [team] }\n")
	runCases(t, []cliCase{
		{"destroying state blocks by default", []string{"review", "--base-assembly", before, "--head-assembly", after}, ExitVerdict,
			[]string{"cdkbot review: blocked · 3 stacks change", "✗ gate destroy-stateful blocks", "OrdersA9B65338 (AWS::DynamoDB::Table) in ShopData"}, nil},
		{"the override label turns it into a warning", []string{"review", "--base-assembly", before, "--head-assembly", after, "--label", "cdkbot/approve-destructive", "--fail-on", "destroy-stateful"}, ExitOK,
			[]string{"! gate destroy-stateful approved by label cdkbot/approve-destructive"}, nil},
		{"more gates", []string{"review", "--base-assembly", before, "--head-assembly", after, "--fail-on", "security-broadening,replace", "--security-severity", "medium", "--label", "x"}, ExitVerdict,
			[]string{"✗ gate replace blocks", "✗ gate security-broadening blocks", "· destroy-stateful"}, nil},
		{"first deployment", []string{"review", "--head-assembly", after, "--config", policy}, ExitOK, []string{"3 stacks change", "policy: 0 error(s)"}, nil},
		{"no head", []string{"review"}, ExitUsage, nil, []string{"name the change: --head-assembly DIR, or --repo DIR"}},
		{"a stack filter that matches nothing", []string{"review", "--base-assembly", before, "--head-assembly", after,
			"--stacks", "ShopNetwrk"}, ExitUsage, nil, []string{`--stacks "ShopNetwrk" matches no stack (stacks: `}},
		{"stack filter", []string{"review", "--base-assembly", before, "--head-assembly", after, "--stacks", "ShopNetwork"}, ExitOK,
			[]string{"cdkbot review: safe · 1 stack changes", "Stack ShopNetwork"}, nil},
		{"unknown gate", []string{"review", "--head-assembly", after, "--fail-on", "everything"}, ExitUsage, nil, []string{`unknown gate "everything"`}},
		{"unknown severity", []string{"review", "--head-assembly", after, "--security-severity", "severe"}, ExitUsage, nil,
			[]string{`--security-severity: severity "severe": use low, medium, high or critical`}},
	})
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"shop.md", []string{"review", "--base-assembly", before, "--head-assembly", after, "--config", policy, "--format", "markdown", "--head-sha", "0123abc"}},
		{"shop-approved.md", []string{"review", "--base-assembly", before, "--head-assembly", after, "--format", "markdown", "--label", "cdkbot/approve-destructive", "--fail-on", "destroy-stateful"}},
		{"shop.txt", []string{"review", "--base-assembly", before, "--head-assembly", after, "--config", policy}},
	} {
		_, stdout, _ := run(t, tc.args...)
		golden.Assert(t, "testdata/review/"+tc.name, []byte(stdout))
	}
}

// A multi-stack, multi-account review: the multi-env app migrated from CDK v1 to today's v2.
func TestMultiAccountReviewGolden(t *testing.T) {
	base := filepath.Join("..", "..", "compat-fixtures", "aws-cdk-core@1.204.0", "multi-env")
	head := filepath.Join("..", "..", "compat-fixtures", "aws-cdk-lib@2.276.0", "multi-env")
	code, stdout, stderr := run(t, "review", "--base-assembly", base, "--head-assembly", head, "--format", "markdown",
		"--fail-on", "destroy-stateful,security-broadening,compat-fail", "--key", "cdk/review/.")
	if code != ExitOK && code != ExitVerdict {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"aws://111111111111/us-east-1", "aws://222222222222/eu-west-1", "#### Compatibility:", "legacy \\(1.0\\) to modern \\(2.0\\)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("review lacks %q", want)
		}
	}
	golden.Assert(t, "testdata/review/multi-account-v1-to-v2.md", []byte(stdout))
}
