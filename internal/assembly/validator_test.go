package assembly

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Every failure is reported at the value that fails, all of them, in pointer order, whatever
// order the validator library visits them in.
func TestValidatorNamesEveryFailureWhereItIs(t *testing.T) {
	t.Parallel()
	sch, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	manifest := `{"version": "55.0.0", "artifacts": {
		"B": {"type": "aws:cloudformation:stack", "dependencies": ["A", 3]},
		"A": {"type": 9}},
	  "missing": [{"key": "k", "provider": "ami", "props": 5}, {"kind": "nope"}]}`
	var doc any
	d := json.NewDecoder(strings.NewReader(manifest))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	got := sch.manifest.Validate(doc)
	want := []Issue{
		{"/artifacts/A/type", "got integer, want string"},
		{"/artifacts/B/dependencies/1", "got integer, want string"},
		{"/missing/0/props", "matches none of the shapes the schema allows here"},
		{"/missing/1", "missing properties 'key', 'props', 'provider'"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("issues:\n got %q\nwant %q", got, want)
	}
	for range 20 { // the library walks maps in random order: the answer must not change
		if again := sch.manifest.Validate(doc); !reflect.DeepEqual(again, got) {
			t.Fatalf("second answer differs: %q", again)
		}
	}
	if sch.manifest.Validate(map[string]any{"version": "55.0.0"}) != nil {
		t.Error("a minimal manifest fails")
	}
}

// The library quotes the value it rejects; a hostile manifest must not make the message huge.
func TestValidatorMessagesAreBounded(t *testing.T) {
	t.Parallel()
	sch, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 10000)
	got := sch.manifest.Validate(map[string]any{"version": "55.0.0", "missing": []any{map[string]any{"kind": "error", "level": long}}})
	if len(got) != 1 || len(got[0].Message) > maxMessage+10 {
		t.Errorf("issues: %d, first message %d bytes", len(got), len(got[0].Message))
	}
	// The library's own words for the keywords the messages rewrite, from a schema of its own.
	var own jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
		"properties": {"n": {"type": "string"}, "r": {}}, "required": ["r"], "additionalProperties": false}`), &own); err != nil {
		t.Fatal(err)
	}
	v, err := newValidator(&own, "")
	if err != nil {
		t.Fatal(err)
	}
	for value, want := range map[string]string{
		`{"r": 1, "extra one": 2}`: "property 'extra one' not allowed here",
		`{"n": "s"}`:               "missing property 'r'",
		`{"r": 1, "n": [1]}`:       "got array, want string",
	} {
		var doc any
		_ = json.Unmarshal([]byte(value), &doc)
		if got := v.Validate(doc); len(got) != 1 || got[0].Message != want {
			t.Errorf("%s: %q, want %q", value, got, want)
		}
	}
	if p := plural("property", "properties", `"a b" "c\"d"`); p != `properties 'a b', 'c"d'` {
		t.Errorf("plural: %s", p)
	}
}
