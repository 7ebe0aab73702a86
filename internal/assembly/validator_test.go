package assembly

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Every failure is reported at the value that fails, all of them, in pointer order, whatever
// order the maps are walked in.
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

// A message quotes the value it rejects; a hostile manifest must not make the message huge.
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
	// The messages of each keyword, from a schema of its own.
	doc, err := compileSchema([]byte(`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
		"properties": {"n": {"type": "string"}, "r": {}, "e": {"enum": ["a", 1]}, "o": {"oneOf": [{"type": "string"}, {"const": "x"}]},
		"f": {"type": "number"}, "no": {"not": {"type": "string"}}, "p": {"patternProperties": {"^x": {"type": "boolean"}}}},
		"required": ["r"], "additionalProperties": false}`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := newValidator(doc, "")
	if err != nil {
		t.Fatal(err)
	}
	for value, want := range map[string]string{
		`{"r": 1, "extra one": 2}`:   "property 'extra one' not allowed here",
		`{"n": "s"}`:                 "missing property 'r'",
		`{"r": 1, "n": [1]}`:         "got array, want string",
		`{"r": 1, "e": "b"}`:         `got "b", want one of "a", 1`,
		`{"r": 1, "o": "x"}`:         "matches more than one of the shapes the schema allows here",
		`{"r": 1, "o": 3}`:           "matches none of the shapes the schema allows here",
		`{"r": 1, "f": "1"}`:         "got string, want number",
		`{"r": 1, "no": "s"}`:        "matches a shape the schema forbids here",
		`{"r": 1, "p": {"xa": "s"}}`: "got string, want boolean",
	} {
		d := json.NewDecoder(strings.NewReader(value))
		d.UseNumber()
		var val any
		if err := d.Decode(&val); err != nil {
			t.Fatal(err)
		}
		if got := v.Validate(val); len(got) != 1 || got[0].Message != want {
			t.Errorf("%s: %q, want %q", value, got, want)
		}
	}
	for _, value := range []any{map[string]any{"r": 1.0, "e": json.Number("1.0"), "f": json.Number("2.5")},
		map[string]any{"r": nil, "p": map[string]any{"y": "anything", "xb": true}}} {
		if got := v.Validate(value); got != nil {
			t.Errorf("%v: %q", value, got)
		}
	}
}

// A keyword the validator does not implement would be ignored silently by a lenient compiler:
// an update of the embedded schema that brings one must fail here, not check half of a manifest.
func TestSchemaCompilerRefusesWhatItCannotCheck(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{
		`{"type": "object", "minProperties": 1}`,
		`{"properties": {"a": {"$ref": "#/definitions/Nope"}}}`,
		`{"$ref": "other.json#/definitions/X"}`,
		`{"properties": {"a": 3}}`,
	} {
		if _, err := compileSchema([]byte(schema)); err == nil {
			t.Errorf("%s compiled", schema)
		}
	}
}
