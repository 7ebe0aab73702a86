package assembly

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// The embedded schemas are checked by a validator of cdkbot's own (compiled in well under a
// millisecond, where a general library costs every process several: see loadSchemas). A general,
// maintained JSON Schema validator is its oracle here: on every manifest and asset manifest the
// compat fixtures hold (written by real framework versions) and on a few thousand mutations of
// them (a value of another type, a key removed, an unknown key added, an array emptied), both
// must accept or both refuse. A keyword the own validator got wrong, or one a schema update
// brings that it handles differently, fails this test.
func TestValidatorAgreesWithALibraryValidator(t *testing.T) {
	s, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	oracle := map[string]*jsonschema.Schema{}
	for _, name := range []string{"cloud-assembly.schema.json", "assets.schema.json"} {
		raw, err := os.ReadFile(filepath.Join("schema", name))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		url := "file:///" + name
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if oracle[name], err = c.Compile(url); err != nil {
			t.Fatal(err)
		}
	}
	ours := map[string]*validator{"cloud-assembly.schema.json": s.manifest, "assets.schema.json": s.assets}

	var files []string
	err = filepath.WalkDir(filepath.Join("..", "..", "compat-fixtures"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (d.Name() == "manifest.json" || strings.HasSuffix(d.Name(), ".assets.json")) {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) < 20 {
		t.Fatalf("compat fixtures: %d files, %v", len(files), err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	cases, disagreements, refused := 0, 0, 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := "cloud-assembly.schema.json"
		if strings.HasSuffix(file, ".assets.json") {
			name = "assets.schema.json"
		}
		for i := range 40 {
			value, err := cfn.DecodeJSON(raw)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			what := "as written"
			if i > 0 {
				value, what = mutate(rng, value)
			}
			cases++
			own := len(ours[name].Validate(value)) == 0
			lib := oracle[name].Validate(value) == nil
			if !lib {
				refused++
			}
			if own != lib {
				disagreements++
				if disagreements <= 5 {
					t.Errorf("%s (%s): cdkbot's validator says valid=%v, the library valid=%v", file, what, own, lib)
				}
			}
		}
	}
	if disagreements > 0 {
		t.Errorf("%d of %d cases disagree", disagreements, cases)
	}
	if refused < cases/10 || refused > cases*9/10 {
		t.Errorf("the mutations are not telling: %d of %d refused", refused, cases)
	}
	t.Logf("%d files, %d cases agree (%d refused by both)", len(files), cases, refused)
}

// mutate changes one random place of a decoded JSON document and says what it did.
func mutate(rng *rand.Rand, root any) (any, string) {
	var paths [][]any // each a path of keys (string) and indexes (int) to a container or value
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		paths = append(paths, slices.Clone(path))
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k], append(path, k))
			}
		case []any:
			for i, e := range x {
				walk(e, append(path, i))
			}
		}
	}
	walk(root, nil)
	path := paths[rng.IntN(len(paths))]
	if len(path) == 0 {
		return root, "unchanged"
	}
	parent := root
	for _, step := range path[:len(path)-1] {
		switch s := step.(type) {
		case string:
			parent = parent.(map[string]any)[s]
		case int:
			parent = parent.([]any)[s]
		}
	}
	last := path[len(path)-1]
	replacement := []any{"text", 42, true, nil, []any{}, map[string]any{}}[rng.IntN(6)]
	op := rng.IntN(4)
	switch p := parent.(type) {
	case map[string]any:
		k := last.(string)
		switch op {
		case 0:
			delete(p, k)
			return root, fmt.Sprintf("removed %v", path)
		case 1:
			p["zzUnknownKey"] = 1
			return root, fmt.Sprintf("unknown key beside %v", path)
		default:
			p[k] = replacement
			return root, fmt.Sprintf("%v set to %#v", path, replacement)
		}
	case []any:
		p[last.(int)] = replacement
		return root, fmt.Sprintf("%v set to %#v", path, replacement)
	}
	return root, "unchanged"
}
