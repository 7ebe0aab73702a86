package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/render"
)

// Written stack by stack, the text and JSON views of two assemblies are the bytes Diff and the
// whole-report views give, --stacks included; so is the Markdown view, which stays whole.
func TestDiffToWritesWhatTheWholeReportWrites(t *testing.T) {
	t.Parallel()
	fixtures := "../../compat-fixtures/"
	edited := copyFixture(t, fixtures+"aws-cdk-lib@2.276.0/deploy-graph")
	edit(t, filepath.Join(edited, "Data.template.json"), `"TopicName": "graph-data"`, `"TopicName": "graph-data-v2"`)
	for _, c := range []struct {
		name, old, new string
		stacks         []string
	}{
		{"versions", fixtures + "aws-cdk-core@1.204.0/deploy-graph", fixtures + "aws-cdk-lib@2.276.0/deploy-graph", nil},
		{"exports in use", fixtures + "aws-cdk-lib@2.276.0/deploy-graph", edited, nil},
		{"globs", fixtures + "aws-cdk-lib@2.276.0/deploy-graph", edited, []string{"Svc*", "Data"}},
		{"nested", fixtures + "aws-cdk-core@1.204.0/stage-nested", fixtures + "aws-cdk-lib@2.276.0/stage-nested", nil},
		{"no change", fixtures + "aws-cdk-lib@2.276.0/multi-env", fixtures + "aws-cdk-lib@2.276.0/multi-env", nil},
	} {
		report, err := Diff(c.old, c.new, c.stacks)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		opts := render.DiffOptions{Color: true}
		for _, format := range []string{"text", "json", "markdown"} {
			var want, got bytes.Buffer
			switch format {
			case "json":
				err = render.DiffJSON(&want, *report)
			case "markdown":
				err = render.DiffMarkdown(&want, *report, opts)
			default:
				err = render.DiffText(&want, *report, opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			changed, err := DiffTo(&got, c.old, c.new, c.stacks, DiffView{Format: format, Options: opts})
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, format, err)
			}
			if got.String() != want.String() {
				t.Errorf("%s %s: stack by stack\n%s\nwhole\n%s", c.name, format, got.String(), want.String())
			}
			if changed != report.HasChanges() {
				t.Errorf("%s %s: changed %v, want %v", c.name, format, changed, report.HasChanges())
			}
		}
	}
}

// A stack whose template is broken fails the diff with an input error, and nothing is written:
// not the stacks before it either.
func TestDiffToWritesNothingWhenAStackFails(t *testing.T) {
	t.Parallel()
	base := "../../compat-fixtures/aws-cdk-lib@2.276.0/deploy-graph"
	head := copyFixture(t, base)
	if err := os.WriteFile(filepath.Join(head, "Web.template.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		_, err := DiffTo(&out, base, head, nil, DiffView{Format: format})
		if err == nil || !strings.Contains(err.Error(), "Web") || out.Len() != 0 {
			t.Errorf("%s: err %v, %d bytes written", format, err, out.Len())
		}
	}
}

func copyFixture(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return out
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(raw), old) {
		t.Fatalf("%s lacks %q: %v", file, old, err)
	}
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(string(raw), old, new)), 0o644); err != nil {
		t.Fatal(err)
	}
}
