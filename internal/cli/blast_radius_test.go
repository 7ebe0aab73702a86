package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// editAssembly copies a real fixture with old replaced by new in the files matching glob.
func editAssembly(t *testing.T, fixtureDir, glob, old, new string) string {
	t.Helper()
	dir := copyDir(t, fixtureDir)
	files, _ := filepath.Glob(filepath.Join(dir, glob))
	if len(files) == 0 {
		t.Fatalf("no %s in %s", glob, fixtureDir)
	}
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		if !strings.Contains(string(raw), old) {
			t.Fatalf("%s lacks %q", f, old)
		}
		os.WriteFile(f, []byte(strings.ReplaceAll(string(raw), old, new)), 0o644)
	}
	return dir
}

// The PR comment when a replacement crosses stack boundaries, on real assemblies: a VPC replaced
// inside a nested stack replaces the parent's security group; a topic replaced in Data changes
// the export Svc1 and Svc2 import, which CloudFormation would refuse while they import it.
func TestBlastRadiusComments(t *testing.T) {
	for _, c := range []struct {
		golden, fixture, glob, old, new, failOn string
		wants                                   []string
	}{
		{"nested-vpc.md", "aws-cdk-lib@2.276.0/nested-vpc", "*.nested.template.json", `"CidrBlock": "10.0.0.0/16"`, `"CidrBlock": "10.1.0.0/16"`, "replace",
			[]string{"2 replacements", "**Blocked by `replace`**", "ServiceSg"}},
		{"cross-stack.md", "aws-cdk-lib@2.276.0/deploy-graph", "Data.template.json", `"TopicName": "graph-data"`, `"TopicName": "graph-data-v2"`, "",
			[]string{"**Blocked by `export-in-use`**", "is imported by Svc1, Svc2"}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			base := fixture(t, c.fixture)
			head := editAssembly(t, base, c.glob, c.old, c.new)
			args := []string{"review", "--base-assembly", base, "--head-assembly", head, "--format", "markdown", "--key", "blast"}
			if c.failOn != "" {
				args = append(args, "--fail-on", c.failOn)
			}
			code, stdout, stderr := run(t, args...)
			if code != ExitVerdict {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			for _, w := range c.wants {
				if !strings.Contains(stdout, w) {
					t.Errorf("comment lacks %q", w)
				}
			}
			golden.Assert(t, filepath.Join("testdata", "review", c.golden), []byte(stdout))
		})
	}
}
