package aspects

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

func loadApp(t *testing.T, dir string) *App {
	t.Helper()
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	app, err := Build(a)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// Every compat fixture builds into a tree where every template resource has exactly one node.
func TestBuildEveryFixture(t *testing.T) {
	t.Parallel()
	manifests, _ := filepath.Glob("../../compat-fixtures/*@*/*/manifest.json")
	if len(manifests) < 20 {
		t.Fatalf("%d fixtures", len(manifests))
	}
	for _, m := range manifests {
		app := loadApp(t, filepath.Dir(m))
		linked := map[string]int{}
		app.Root.Walk(func(n *Node) {
			if n.Resource != nil {
				linked[n.Stack.ID+"/"+n.LogicalID]++
			}
		})
		for _, st := range app.Stacks {
			if st.Node == nil {
				t.Errorf("%s: stack %s has no construct", m, st.ID)
			}
			for _, id := range get(st.Template, "Resources").(interface{ Keys() []string }).Keys() {
				if id == "CDKMetadata" {
					continue
				}
				if linked[st.ID+"/"+id] != 1 {
					t.Errorf("%s: resource %s/%s linked %d times", m, st.ID, id, linked[st.ID+"/"+id])
				}
			}
		}
	}
}

func TestTreeThatDoesNotMatchTheTemplates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := "../../compat-fixtures/aws-cdk-lib@2.276.0/multi-env"
	entries, _ := os.ReadDir(src)
	for _, e := range entries {
		if !e.IsDir() {
			b, _ := os.ReadFile(filepath.Join(src, e.Name()))
			if e.Name() == "Network.template.json" {
				b = []byte(strings.Replace(string(b), `"Topic"`, `"Renamed"`, 1))
			}
			os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
		} else {
			os.MkdirAll(filepath.Join(dir, e.Name()), 0o755)
			sub, _ := os.ReadDir(filepath.Join(src, e.Name()))
			for _, f := range sub {
				b, _ := os.ReadFile(filepath.Join(src, e.Name(), f.Name()))
				os.WriteFile(filepath.Join(dir, e.Name(), f.Name()), b, 0o644)
			}
		}
	}
	a, err := assembly.Load(os.DirFS(dir), "cdk.out")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(a)
	if err == nil || !strings.Contains(err.Error(), "tree.json does not match the templates") || !strings.Contains(err.Error(), "Topic") {
		t.Fatalf("got %v", err)
	}
}
