package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/testutil/templategen"
)

// Written stack by stack, the text, JSON and Markdown views of two assemblies are the bytes Diff
// and the whole-report views give, --stacks included.
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
	for _, format := range []string{"text", "json", "markdown"} {
		var out bytes.Buffer
		_, err := DiffTo(&out, base, head, nil, DiffView{Format: format})
		if err == nil || !strings.Contains(err.Error(), "Web") || out.Len() != 0 {
			t.Errorf("%s: err %v, %d bytes written", format, err, out.Len())
		}
	}
}

// The Markdown view of two assemblies is written stack by stack, through the spool, and gives the
// bytes of the view of the whole report at every budget: stacks degraded, left out, the attention
// list shortened and the view cut.
func TestDiffToWritesMarkdownStackByStack(t *testing.T) {
	t.Parallel()
	fixtures := "../../compat-fixtures/"
	many := writeAssemblies(t, 30, 20)
	seen := map[string]bool{}
	for _, c := range []struct {
		name, old, new string
		stacks         []string
	}{
		{"versions", fixtures + "aws-cdk-core@1.204.0/deploy-graph", fixtures + "aws-cdk-lib@2.276.0/deploy-graph", nil},
		{"nested", fixtures + "aws-cdk-core@1.204.0/stage-nested", fixtures + "aws-cdk-lib@2.276.0/stage-nested", nil},
		{"multi-env", fixtures + "aws-cdk-core@1.204.0/multi-env", fixtures + "aws-cdk-lib@2.0.0/multi-env", nil},
		{"many stacks", many + "-old", many + "-new", nil},
		{"many stacks, globs", many + "-old", many + "-new", []string{"Stack01*", "Stack02[0-4]"}},
	} {
		report, err := Diff(c.old, c.new, c.stacks)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, budget := range []int{0, 20000, 4000, 1500, 1000, 400, 250} {
			view := DiffView{Format: "markdown", Options: render.DiffOptions{Budget: budget, FoldAssets: true}}
			var want bytes.Buffer
			if err := render.DiffMarkdown(&want, *report, view.Options); err != nil {
				t.Fatal(err)
			}
			spool, err := os.CreateTemp(t.TempDir(), "spool")
			if err != nil {
				t.Fatal(err)
			}
			var streamed, got bytes.Buffer
			changed, err := diffStacksTo(&streamed, spool, c.old, c.new, c.stacks, view)
			spool.Close()
			if err != nil {
				t.Fatalf("%s, budget %d: %v", c.name, budget, err)
			}
			if _, err := DiffTo(&got, c.old, c.new, c.stacks, view); err != nil {
				t.Fatalf("%s, budget %d: %v", c.name, budget, err)
			}
			for _, out := range []string{streamed.String(), got.String()} {
				if out != want.String() {
					t.Errorf("%s, budget %d: stack by stack\n%s\nwhole\n%s", c.name, budget, out, want.String())
				}
			}
			if changed != report.HasChanges() {
				t.Errorf("%s, budget %d: changed %v, want %v", c.name, budget, changed, report.HasChanges())
			}
			out := want.String()
			for _, step := range []string{"(details omitted for size)", "more stacks not shown", "(truncated to fit"} {
				seen[step] = seen[step] || strings.Contains(out, step)
			}
			if strings.Contains(out, "\n- … and ") && !strings.Contains(out, "(truncated to fit") {
				seen["attention list shortened"] = seen["attention list shortened"] || strings.Count(out, "\n- **") < 50
			}
		}
	}
	for _, step := range []string{"(details omitted for size)", "more stacks not shown", "attention list shortened",
		"(truncated to fit"} {
		if !seen[step] {
			t.Errorf("no budget led to %q", step)
		}
	}
}

// writeAssemblies writes DIR-old and DIR-new, two assemblies of n stacks of the given number of
// resources each, every fifth stack unchanged, and returns DIR.
func writeAssemblies(t *testing.T, n, resources int) string {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), "scale")
	old, new := templategen.Pair(resources)
	for _, side := range []string{"old", "new"} {
		dir := prefix + "-" + side
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		artifacts := map[string]any{}
		for i := range n {
			tpl := old
			if side == "new" && i%5 != 4 {
				tpl = new
			}
			id := fmt.Sprintf("Stack%03d", i)
			if err := os.WriteFile(filepath.Join(dir, id+".template.json"), tpl, 0o644); err != nil {
				t.Fatal(err)
			}
			artifacts[id] = map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1",
				"properties": map[string]any{"templateFile": id + ".template.json"}}
		}
		manifest, _ := json.Marshal(map[string]any{"version": "55.0.0", "artifacts": artifacts})
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return prefix
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
