// Package compatfixtures holds cloud assemblies synthesized by real, old framework versions
// (see README.md and generate.sh) and the test that keeps cdkbot reading every one of them.
package compatfixtures

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cli"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// fixture is what generate.sh records beside each framework version's assemblies.
type fixture struct {
	Framework string `json:"framework"`
	Version   string `json:"version"`
}

// TestEveryFixture walks ALL fixture assemblies, so a new fixture directory is covered without
// code changes: each must load, validate, name the framework that made it, parse every
// template, and match its inspect goldens.
func TestEveryFixture(t *testing.T) {
	manifests, err := filepath.Glob("*@*/*/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) < 20 {
		t.Fatalf("found %d fixture assemblies, expected at least 20: are the fixtures committed?", len(manifests))
	}
	for _, m := range manifests {
		dir := filepath.Dir(m)
		t.Run(dir, func(t *testing.T) {
			var fx fixture
			raw, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "fixture.json"))
			if err != nil {
				t.Fatalf("every framework directory needs the fixture.json generate.sh writes: %v", err)
			}
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatal(err)
			}

			a, err := assembly.Load(os.DirFS(dir), dir)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if got := a.Framework(); got.Name != fx.Framework || got.Version != fx.Version {
				t.Errorf("detected framework %q, fixture was made with %s %s", got, fx.Framework, fx.Version)
			}
			stacks := a.AllStacks()
			if len(stacks) == 0 {
				t.Fatal("no stacks")
			}
			for _, s := range stacks {
				// The app exists to cross CloudFormation's inline TemplateBody limit.
				if strings.HasSuffix(dir, "large-template") && s.TemplateSize <= 51200 {
					t.Errorf("stack %s: template is %d bytes, the fixture must exceed 51,200", s.QualifiedID(), s.TemplateSize)
				}
				tpl, err := s.Template()
				if err != nil {
					t.Errorf("stack %s: %v", s.QualifiedID(), err)
					continue
				}
				if _, ok := tpl["Resources"]; !ok {
					t.Errorf("stack %s: template has no Resources", s.QualifiedID())
				}
			}

			// Diffing a fixture with itself finds nothing; this reads every template and nested stack.
			if code := cli.Main(context.Background(), []string{"diff", dir, dir, "--fail"}, nil, io.Discard, io.Discard); code != cli.ExitOK {
				t.Errorf("diff of the fixture with itself exited %d", code)
			}

			for _, f := range []string{"json", "text"} {
				var out, errOut bytes.Buffer
				code := cli.Main(context.Background(), []string{"inspect", dir, "--format", f}, nil, &out, &errOut)
				if code != cli.ExitOK {
					t.Fatalf("inspect --format %s exited %d: %s", f, code, errOut.String())
				}
				ext := map[string]string{"json": ".inspect.json", "text": ".inspect.txt"}[f]
				golden.Assert(t, dir+ext, out.Bytes())
			}
		})
	}
}

// TestDiffAcrossFrameworkVersions diffs each app as synthesized by one framework version against
// the next: framework upgrades are the changes users review most, and none may fail to diff.
func TestDiffAcrossFrameworkVersions(t *testing.T) {
	raw, err := os.ReadFile("versions.txt")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		dirs = append(dirs, strings.TrimPrefix(strings.ReplaceAll(f[0], "/", "-"), "@")+"@"+f[1])
	}
	diffs := 0
	for _, app := range []string{"multi-env", "stage-nested", "large-template"} {
		for i := 1; i < len(dirs); i++ {
			old, new := filepath.Join(dirs[i-1], app), filepath.Join(dirs[i], app)
			if _, err := os.Stat(old); err != nil {
				continue
			}
			diffs++
			var errOut strings.Builder
			if code := cli.Main(context.Background(), []string{"diff", old, new, "--format", "json"}, nil, io.Discard, &errOut); code != cli.ExitOK {
				t.Errorf("diff %s %s exited %d: %s", old, new, code, errOut.String())
			}
		}
	}
	if diffs < 18 {
		t.Errorf("only %d version pairs diffed; is versions.txt in step with the fixture directories?", diffs)
	}
}
