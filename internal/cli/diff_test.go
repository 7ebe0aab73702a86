package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiffCommand(t *testing.T) {
	dir := t.TempDir()
	oldJSON := writeFile(t, dir, "old.json", `{"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "a"}}}}`)
	newYAML := writeFile(t, dir, "new.yaml", "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: b\n")
	sameYAML := writeFile(t, dir, "same.yaml", "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: a\n")
	broken := writeFile(t, dir, "broken.json", "{\n  \"Resources\": {\n    \"Q\": }\n}")
	fixture := fixture(t, "aws-cdk-lib@2.276.0/multi-env")

	cases := []cliCase{
		{"replacement, text", []string{"diff", oldJSON, newYAML}, ExitOK, []string{"1 replacement", "[±] replace", "QueueName", `"a" → "b"`}, nil},
		{"--fail with changes", []string{"diff", oldJSON, newYAML, "--fail"}, ExitVerdict, []string{"1 replacement"}, nil},
		{"--fail without changes", []string{"diff", oldJSON, sameYAML, "--fail"}, ExitOK, []string{"no changes"}, nil},
		{"json", []string{"diff", oldJSON, newYAML, "--format", "json"}, ExitOK, []string{`"impact":"replace"`, `"replace":1`}, nil},
		{"markdown", []string{"diff", oldJSON, newYAML, "--format", "markdown"}, ExitOK, []string{"### cdkbot diff", "**Needs attention**"}, nil},
		{"broken template", []string{"diff", oldJSON, broken}, ExitUsage, nil, []string{"broken.json", "line 3, column 10", "malformed JSON"}},
		{"file and directory", []string{"diff", oldJSON, fixture}, ExitUsage, nil, []string{"both be template files or both be cloud assembly directories"}},
		{"missing file", []string{"diff", oldJSON, filepath.Join(dir, "nope.json")}, ExitUsage, nil,
			[]string{"nope.json: no such file or directory; name two templates (.json, .yaml) or two cloud assembly directories"}},
		{"bad glob", []string{"diff", fixture, fixture, "--stacks", "["}, ExitUsage, nil, []string{`--stacks "[" is not a valid glob`}},
		{"assembly to itself", []string{"diff", fixture, fixture, "--fail"}, ExitOK, []string{"no changes"}, nil},
		{"stack filter", []string{"diff", fixture, fixture, "--stacks", "Europe"}, ExitOK, []string{"Stack Europe"}, nil},
		{"a stack filter that matches nothing", []string{"diff", fixture, fixture, "--stacks", "Eurpoe"}, ExitUsage, nil,
			[]string{`--stacks "Eurpoe" matches no stack (stacks: `}},
		{"a stack filter that matches nothing, json", []string{"diff", fixture, fixture, "--stacks", "Eurpoe",
			"--format", "json"}, ExitUsage, nil, []string{`--stacks "Eurpoe" matches no stack`}},
	}
	runCases(t, cases)
	// The stack filter keeps only matching stacks.
	_, out, _ := run(t, "diff", fixture, fixture, "--stacks", "Europe", "--format", "json")
	var r struct {
		Stacks []struct{ ID string } `json:"stacks"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Stacks) != 1 || r.Stacks[0].ID != "Europe" {
		t.Errorf("filtered stacks %+v (%v)", r.Stacks, err)
	}
}
