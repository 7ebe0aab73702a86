package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

func incompleteItems(t *testing.T, dir string) []string {
	t.Helper()
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Input{Head: a})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Gates {
		if g.Name == GateIncomplete {
			return g.Items
		}
	}
	return nil
}

// CloudFormation reads a nested stack's template from its TemplateURL: in assemblies real
// framework versions wrote, the URL names the asset the review reads, and nothing is said; a
// URL that names something else — another asset, an object outside the assembly — blocks.
func TestNestedTemplateURLMustNameTheReviewedAsset(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{
		"../../compat-fixtures/aws-cdk-lib@2.100.0/nested-vpc",
		"../../compat-fixtures/aws-cdk-lib@2.100.0/stage-nested",
		"../../compat-fixtures/aws-cdk-core@1.100.0/stage-nested",
	} {
		for _, it := range incompleteItems(t, dir) {
			if strings.Contains(it, "TemplateURL") {
				t.Errorf("%s: a real assembly is flagged: %s", dir, it)
			}
		}
	}

	// The same real assembly, its nested stack pointed at an object the app names.
	src := "../../compat-fixtures/aws-cdk-lib@2.100.0/nested-vpc"
	dir := filepath.Join(t.TempDir(), "nested-vpc")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	tpl := filepath.Join(dir, "Service.template.json")
	raw, err := os.ReadFile(tpl)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := assembly.Load(os.DirFS(dir), dir)
	var key string
	for _, m := range a.AllAssetManifests() {
		for _, f := range m.Files {
			if strings.HasSuffix(f.Source.Path, ".nested.template.json") {
				key = f.Destinations[0].ObjectKey
			}
		}
	}
	if key == "" || !strings.Contains(string(raw), key) {
		t.Fatalf("the fixture's nested template key %q is not in its parent's TemplateURL", key)
	}
	forged := strings.ReplaceAll(string(raw), key, "attacker-controlled.json")
	if err := os.WriteFile(tpl, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	items := incompleteItems(t, dir)
	if len(items) == 0 || !strings.Contains(strings.Join(items, "\n"), "its TemplateURL names no asset of the stack") {
		t.Errorf("a TemplateURL naming another object is not blocked: %q", items)
	}
}
