package assembly

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// largestFixture is the biggest compat fixture (by manifest and templates).
const largestFixture = "../../compat-fixtures/aws-cdk-lib@2.276.0/multi-env"

func BenchmarkLoadLargestFixture(b *testing.B) {
	fsys := os.DirFS(largestFixture)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(fsys, "fixture"); err != nil {
			b.Fatal(err)
		}
	}
}

// manyStacks writes a modern assembly of n stacks, each with an asset manifest (template plus a
// zip asset), a 50-resource template and a dependency on the previous stack.
func manyStacks(tb testing.TB, n int) string {
	dir := tb.TempDir()
	arts := map[string]any{}
	write := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "asset.code"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "asset.code", "index.js"), []byte("x"), 0o644); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("Stack%03d", i)
		resources := map[string]any{}
		for r := range 50 {
			resources[fmt.Sprintf("Param%02d", r)] = map[string]any{"Type": "AWS::SSM::Parameter",
				"Properties": map[string]any{"Type": "String", "Value": fmt.Sprintf("%s-%d", id, r)}}
		}
		write(id+".template.json", map[string]any{"Resources": resources})
		dest := map[string]any{"d": map[string]any{"bucketName": "cdk-assets-${AWS::AccountId}-${AWS::Region}", "objectKey": id + ".json",
			"assumeRoleArn": "arn:${AWS::Partition}:iam::123456789012:role/pub"}}
		write(id+".assets.json", map[string]any{"version": "55.0.0", "files": map[string]any{
			id:     map[string]any{"source": map[string]any{"path": id + ".template.json", "packaging": "file"}, "destinations": dest},
			"code": map[string]any{"source": map[string]any{"path": "asset.code", "packaging": "zip"}, "destinations": dest},
		}})
		deps := []string{id + ".assets"}
		if i > 0 {
			deps = append(deps, fmt.Sprintf("Stack%03d", i-1))
		}
		arts[id+".assets"] = map[string]any{"type": TypeAssetManifest, "properties": map[string]any{"file": id + ".assets.json"}}
		arts[id] = map[string]any{"type": TypeStack, "environment": "aws://123456789012/us-east-1", "dependencies": deps,
			"properties": map[string]any{"templateFile": id + ".template.json", "assumeRoleArn": "arn:aws:iam::123456789012:role/deploy",
				"requiresBootstrapStackVersion": 6, "bootstrapStackVersionSsmParameter": "/cdk-bootstrap/hnb659fds/version"}}
	}
	write("manifest.json", map[string]any{"version": "55.0.0", "artifacts": arts})
	return dir
}

func BenchmarkLoad200Stacks(b *testing.B) {
	fsys := os.DirFS(manyStacks(b, 200))
	b.ReportAllocs()
	for b.Loop() {
		a, err := Load(fsys, "cdk.out")
		if err != nil {
			b.Fatal(err)
		}
		if len(a.Stacks) != 200 {
			b.Fatalf("%d stacks", len(a.Stacks))
		}
	}
}

// BenchmarkLoad200StacksAndTemplates adds parsing every template, the cost a full diff pays.
func BenchmarkLoad200StacksAndTemplates(b *testing.B) {
	fsys := os.DirFS(manyStacks(b, 200))
	b.ReportAllocs()
	for b.Loop() {
		a, err := Load(fsys, "cdk.out")
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range a.Stacks {
			if _, err := s.Template(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// FuzzLoadManifest feeds arbitrary manifests to the loader: it may refuse them, never panic,
// and any refusal is a typed error the CLI can map to an exit code.
func FuzzLoadManifest(f *testing.F) {
	for _, seed := range []string{
		modern()["manifest.json"].(string),
		`{"version": "1.16.0", "artifacts": {"S": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "t.json"}, "dependencies": ["S"]}}}`,
		`{"version": "99.0.0"}`, `[]`, `{"version": 5}`, `{"version": "55.0.0", "artifacts": {"a": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "."}}}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, manifest string) {
		fsys := fstest.MapFS{
			"manifest.json":     {Data: []byte(manifest)},
			"t.json":            {Data: []byte(`{"Resources": {}}`)},
			"App.template.json": {Data: []byte(`{"Resources": {}}`)},
		}
		_, err := Load(fsys, "cdk.out")
		if err == nil {
			return
		}
		var ae *Error
		var tn *TooNewError
		if !asAny(err, &ae, &tn) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
	})
}

// BenchmarkCompileSchemas is what the first assembly read of every process pays for its
// validators (the schemas compiled once, sync.OnceValues in loadSchemas).
func BenchmarkCompileSchemas(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, name := range []string{"cloud-assembly.schema.json", "assets.schema.json"} {
			raw, err := schemaFiles.ReadFile("schema/" + compactName(name))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := compileSchema(raw); err != nil {
				b.Fatal(err)
			}
		}
	}
}
