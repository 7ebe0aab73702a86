package config

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(SchemaURL) // also validates the schema against its metaschema
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// instance is a YAML document as the JSON value an editor validates.
func instance(t *testing.T, src string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(src), &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// The schema and Parse accept and refuse the same documents. (Parse checks structure only;
// internal/aspects proves the same for aspect names and options.)
func TestSchemaAgreesWithParse(t *testing.T) {
	t.Parallel()
	sch := compileSchema(t)
	for name, tc := range map[string]struct {
		yml   string
		valid bool
	}{
		"readme":             {readme, true},
		"empty":              {"", true},
		"empty sections":     {"aspects:\nsuppress:\nstabilization:\n", true},
		"deploy only":        {"deploy:\n  waves: [Dns]\n", true},
		"empty deploy":       {"deploy: {}\n", true},
		"priority zero":      {"aspects:\n  - use: retain-stateful\n    priority: 0\n", true},
		"no-open-ingress":    {"aspects:\n  - use: no-open-ingress\n    with: { allow: [] }\n", true},
		"a path-less rule":   {"suppress:\n  - rule: no-wildcard-iam\n    reason: break-glass role\n", true},
		"unknown top key":    {"aspect:\n  - use: tags\n", false},
		"unknown aspect key": {"aspects:\n  - use: retain-stateful\n    colour: red\n", false},
		"unknown deploy key": {"deploy:\n  wave: [a]\n", false},
		"fractional prio":    {"aspects:\n  - use: retain-stateful\n    priority: 1.5\n", false},
		"negative priority":  {"aspects:\n  - use: retain-stateful\n    priority: -5\n", false},
		"string priority":    {"aspects:\n  - use: retain-stateful\n    priority: high\n", false},
		"bad approval":       {"deploy:\n  require-approval: always\n", false},
		"bad severity":       {"aspects:\n  - use: retain-stateful\n    severity: fatal\n", false},
		"no reason":          {"suppress:\n  - rule: retain-stateful\n    path: Prod/**\n", false},
		"blank reason":       {"suppress:\n  - rule: retain-stateful\n    reason: '  '\n", false},
		"no rule":            {"suppress:\n  - reason: x\n", false},
		"negative conc.":     {"deploy:\n  concurrency: -1\n", false},
		"wordy concurrency":  {"deploy:\n  concurrency: many\n", false},
		"empty wave":         {"deploy:\n  waves: ['']\n", false},
		"deploy a list":      {"deploy: [waves]\n", false},
		"deploy null":        {"deploy:\n", false},
		"stabilization word": {"stabilization: maybe\n", false},
		"a list":             {"- use: tags\n", false},
		"synth exclude":      {"synth:\n  exclude: ['*.md', /docs/, '**/*.test.ts']\n", true},
		"synth nothing":      {"synth:\n  exclude: []\n", true},
		"synth unknown key":  {"synth:\n  include: [src]\n", false},
		"synth exclude word": {"synth:\n  exclude: docs\n", false},
		"synth blank":        {"synth:\n  exclude: ['/ ']\n", false},
		"synth a list":       {"synth: [exclude]\n", false},
	} {
		_, parseErr := Parse(".cdkbot.yml", []byte(tc.yml))
		schemaErr := sch.Validate(instance(t, tc.yml))
		if (parseErr == nil) != tc.valid || (schemaErr == nil) != tc.valid {
			t.Errorf("%s: want valid=%v; Parse: %v; schema: %v", name, tc.valid, parseErr, schemaErr)
		}
	}
}

// The schema lists exactly the keys Parse reads, and tells an editor what each one is for.
func TestSchemaKeysAndDescriptions(t *testing.T) {
	t.Parallel()
	var s map[string]any
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatal(err)
	}
	defs := s["definitions"].(map[string]any)
	for where, want := range map[string][]string{"top level": fileKeys, "aspect": aspectKeys, "suppression": suppressionKeys, "deploy": deployKeys,
		"synth": synthKeys} {
		node := s
		if where != "top level" {
			node = defs[where].(map[string]any)
		}
		var keys []string
		for k := range node["properties"].(map[string]any) {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(keys, want) {
			t.Errorf("%s: the schema has %v, Parse reads %v", where, keys, want)
		}
		if node["additionalProperties"] != false {
			t.Errorf("%s: the schema must refuse unknown keys, as Parse does", where)
		}
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok && !strings.Contains(path, "/if") {
			for k, p := range props {
				pm := p.(map[string]any)
				ref, _ := pm["$ref"].(string)
				if pm["description"] == nil && (ref == "" || defs[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any)["description"] == nil) {
					t.Errorf("%s/properties/%s has no description", path, k)
				}
			}
		}
		for k, c := range m {
			walk(path+"/"+k, c)
		}
	}
	walk("#", s)
	for name, d := range defs {
		if d.(map[string]any)["description"] == nil {
			t.Errorf("definitions/%s has no description", name)
		}
	}
}
