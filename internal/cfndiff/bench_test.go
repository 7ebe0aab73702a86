package cfndiff

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/resourcespec"
	"github.com/cdkbot/cdkbot/internal/testutil/templategen"
)

func parsedPair(b *testing.B, n int) (*cfn.Object, *cfn.Object) {
	o, nw := templategen.Pair(n)
	return tpl(b, string(o)), tpl(b, string(nw))
}

// benchDiff measures the in-process diff of parsed templates (the reference's fullDiff with
// its specification loaded is the comparison point; see scripts/benchdiff).
func benchDiff(b *testing.B, n int) {
	old, new := parsedPair(b, n)
	resourcespec.Default()
	b.ReportAllocs()
	for b.Loop() {
		d := Diff(old, new, Options{})
		if len(d.Resources) != n {
			b.Fatalf("%d changed resources, want %d", len(d.Resources), n)
		}
	}
}

func BenchmarkDiff500(b *testing.B)   { benchDiff(b, 500) }
func BenchmarkDiff2000(b *testing.B)  { benchDiff(b, 2000) }
func BenchmarkDiff10000(b *testing.B) { benchDiff(b, 10000) }

// BenchmarkParseAndDiff500 adds parsing both templates, what a whole command pays.
func BenchmarkParseAndDiff500(b *testing.B) {
	old, new := templategen.Pair(500)
	b.ReportAllocs()
	for b.Loop() {
		o, err := cfn.Parse(old)
		if err != nil {
			b.Fatal(err)
		}
		n, err := cfn.Parse(new)
		if err != nil {
			b.Fatal(err)
		}
		Diff(o, n, Options{})
	}
}

// writeAssembly writes a modern assembly of stacks stacks, each a 500-resource template.
func writeAssembly(b *testing.B, dir string, stacks int, version int) {
	arts := map[string]any{}
	for i := range stacks {
		old, new := templategen.Pair(500)
		t := old
		if version == 1 {
			t = new
		}
		name := fmt.Sprintf("Stack%03d", i)
		if err := os.WriteFile(filepath.Join(dir, name+".template.json"), t, 0o644); err != nil {
			b.Fatal(err)
		}
		arts[name] = map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"templateFile": name + ".template.json"}}
	}
	m, _ := json.Marshal(map[string]any{"version": "55.0.0", "artifacts": arts})
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), m, 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAssemblies100x500 loads two 100-stack assemblies of 500 resources per stack and
// diffs every stack: 50,000 resources per side, read, parsed and diffed.
func BenchmarkAssemblies100x500(b *testing.B) {
	oldDir, newDir := b.TempDir(), b.TempDir()
	writeAssembly(b, oldDir, 100, 0)
	writeAssembly(b, newDir, 100, 1)
	b.ReportAllocs()
	for b.Loop() {
		oa, err := assembly.Load(os.DirFS(oldDir), "old")
		if err != nil {
			b.Fatal(err)
		}
		na, err := assembly.Load(os.DirFS(newDir), "new")
		if err != nil {
			b.Fatal(err)
		}
		stacks, err := DiffAssemblies(oa, na, nil, Options{})
		if err != nil || len(stacks) != 100 {
			b.Fatal(err, len(stacks))
		}
	}
}
