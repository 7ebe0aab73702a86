package assembly

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the compact schemas from the vendored ones")

// compact is a schema without what validation does not read (descriptions, titles, defaults):
// a fifth of the bytes to parse, on the start of every process that reads an assembly.
func compact(t *testing.T, raw []byte) []byte {
	t.Helper()
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var strip func(v any, names bool) any
	strip = func(v any, names bool) any { // names: the keys are names (properties), not keywords
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				switch {
				case names:
					out[k] = strip(e, false)
				case annotations[k]:
				case k == "properties" || k == "definitions" || k == "patternProperties":
					out[k] = strip(e, true)
				default:
					out[k] = strip(e, false)
				}
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = strip(e, false)
			}
			return out
		}
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(strip(doc, false)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The embedded compact schemas are the vendored ones less their annotations (go test
// ./internal/assembly -run TestCompactSchemas -update rewrites them; schema/update.sh does).
func TestCompactSchemasAreCurrent(t *testing.T) {
	for _, name := range []string{"cloud-assembly.schema.json", "assets.schema.json"} {
		raw, err := os.ReadFile("schema/" + name)
		if err != nil {
			t.Fatal(err)
		}
		want := compact(t, raw)
		file := "schema/" + compactName(name)
		if *update {
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not %s less its annotations (%v): run go test ./internal/assembly -run TestCompactSchemas -update",
				file, name, err)
		}
	}
}
