package cli

import (
	"path/filepath"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

func TestReviewCommand(t *testing.T) {
	before, after := filepath.Join("demo", "before"), filepath.Join("demo", "after")
	dir := t.TempDir()
	policy := writeFile(t, dir, "policy.yml", "aspects:\n  - use: tags\n    with: { tags: { team: core } }\n  - use: require-tags\n    with: { keys: [team] }\n")
	runCases(t, []cliCase{
		{"destroying state blocks by default", []string{"review", "--base-assembly", before, "--head-assembly", after}, ExitVerdict,
			[]string{"cdkbot review: 3 stacks change", "✗ gate destroy-stateful blocks", "OrdersA9B65338 (AWS::DynamoDB::Table) in ShopData"}, nil},
		{"the override label turns it into a warning", []string{"review", "--base-assembly", before, "--head-assembly", after, "--label", "cdkbot/approve-destructive"}, ExitOK,
			[]string{"! gate destroy-stateful overridden by label cdkbot/approve-destructive"}, nil},
		{"more gates", []string{"review", "--base-assembly", before, "--head-assembly", after, "--fail-on", "security-broadening,replace", "--label", "x"}, ExitVerdict,
			[]string{"✗ gate replace blocks", "✗ gate security-broadening blocks", "· destroy-stateful"}, nil},
		{"first deployment", []string{"review", "--head-assembly", after, "--config", policy}, ExitOK, []string{"3 stacks change", "policy: 0 error(s)"}, nil},
		{"no head", []string{"review"}, ExitUsage, nil, []string{"name the change: --head-assembly DIR, or --repo DIR"}},
		{"unknown gate", []string{"review", "--head-assembly", after, "--fail-on", "everything"}, ExitUsage, nil, []string{`unknown gate "everything"`}},
	})
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"shop.md", []string{"review", "--base-assembly", before, "--head-assembly", after, "--config", policy, "--format", "markdown", "--head-sha", "0123abc"}},
		{"shop-approved.md", []string{"review", "--base-assembly", before, "--head-assembly", after, "--format", "markdown", "--label", "cdkbot/approve-destructive"}},
		{"shop.txt", []string{"review", "--base-assembly", before, "--head-assembly", after, "--config", policy}},
	} {
		_, stdout, _ := run(t, tc.args...)
		golden.Assert(t, "testdata/review/"+tc.name, []byte(stdout))
	}
}
