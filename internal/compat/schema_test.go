package compat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/semver"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// stack wraps properties in the shape of the real schema's AwsCloudFormationStackProperties.
func stack(props string, required ...string) string {
	req, _ := json.Marshal(required)
	return `{"$ref": "#/definitions/AwsCloudFormationStackProperties", "definitions": {"AwsCloudFormationStackProperties":
	  {"type": "object", "properties": {` + props + `}, "required": ` + string(req) + `}}}`
}

func TestEachRuleWithSchemaSnippets(t *testing.T) {
	t.Parallel()
	tf := `"templateFile": {"type": "string"}`
	cases := []struct {
		name     string
		old, new string
		kind     Kind
		bump     semver.Bump
		path     string
	}{
		{"remove a property", stack(tf+`, "stackName": {"type": "string"}`, "templateFile"), stack(tf, "templateFile"),
			Removed, semver.Major, "#/definitions/AwsCloudFormationStackProperties/properties/stackName"},
		{"rename a property", stack(tf+`, "stackName": {"type": "string", "description": "n"}`, "templateFile"),
			stack(tf+`, "name": {"type": "string", "description": "n"}`, "templateFile"), Renamed, semver.Major, "#/definitions/AwsCloudFormationStackProperties/properties/stackName"},
		{"change a type", stack(`"terminationProtection": {"type": "boolean"}`), stack(`"terminationProtection": {"type": "string"}`),
			TypeChanged, semver.Major, "#/definitions/AwsCloudFormationStackProperties/properties/terminationProtection/type"},
		{"optional → required", stack(tf+`, "stackName": {"type": "string"}`, "templateFile"), stack(tf+`, "stackName": {"type": "string"}`, "templateFile", "stackName"),
			MadeRequired, semver.Major, "#/definitions/AwsCloudFormationStackProperties/properties/stackName"},
		{"new required input", stack(tf, "templateFile"), stack(tf+`, "region": {"type": "string"}`, "templateFile", "region"),
			AddedRequired, semver.Major, "#/definitions/AwsCloudFormationStackProperties/properties/region"},
		{"new optional property", stack(tf, "templateFile"), stack(tf+`, "notificationArns": {"type": "array", "items": {"type": "string"}}`, "templateFile"),
			AddedOptional, semver.Minor, "#/definitions/AwsCloudFormationStackProperties/properties/notificationArns"},
		{"widened enum", `{"definitions": {"ArtifactType": {"type": "string", "enum": ["none", "aws:cloudformation:stack"]}}}`,
			`{"definitions": {"ArtifactType": {"type": "string", "enum": ["none", "aws:cloudformation:stack", "cdk:tree"]}}}`,
			EnumWidened, semver.Minor, "#/definitions/ArtifactType/enum"},
		{"narrowed enum", `{"definitions": {"ArtifactType": {"enum": ["none", "cdk:tree"]}}}`, `{"definitions": {"ArtifactType": {"enum": ["none"]}}}`,
			EnumNarrowed, semver.Major, "#/definitions/ArtifactType/enum"},
		{"new type", `{"definitions": {"A": {"type": "object"}}}`, `{"definitions": {"A": {"type": "object"}, "BootstrapRole": {"type": "object"}}}`,
			AddedType, semver.Minor, "#/definitions/BootstrapRole"},
		{"type widened to a list", stack(`"x": {"type": "string"}`), stack(`"x": {"type": ["string", "number"]}`),
			TypeWidened, semver.Minor, "#/definitions/AwsCloudFormationStackProperties/properties/x/type"},
		{"description only", stack(`"x": {"type": "string", "description": "a"}`), stack(`"x": {"type": "string", "description": "b"}`),
			Documentation, semver.Patch, "#/definitions/AwsCloudFormationStackProperties/properties/x/description"},
		{"closed to extra properties", `{"type": "object"}`, `{"type": "object", "additionalProperties": false}`, Closed, semver.Major, "#/additionalProperties"},
		{"anyOf branch added", `{"definitions": {"A": {}, "B": {}}, "anyOf": [{"$ref": "#/definitions/A"}]}`,
			`{"definitions": {"A": {}, "B": {}}, "anyOf": [{"$ref": "#/definitions/A"}, {"$ref": "#/definitions/B"}]}`, TypeWidened, semver.Minor, "#/anyOf/1"},
		{"anyOf branch removed", `{"definitions": {"A": {}, "B": {}}, "anyOf": [{"$ref": "#/definitions/A"}, {"$ref": "#/definitions/B"}]}`,
			`{"definitions": {"A": {}, "B": {}}, "anyOf": [{"$ref": "#/definitions/A"}]}`, Removed, semver.Major, "#/anyOf/1"},
		{"pattern tightened", `{"type": "string"}`, `{"type": "string", "pattern": "^a"}`, ConstraintAdded, semver.Major, "#/pattern"},
		{"items narrowed", `{"type": "array", "items": {"type": ["string", "number"]}}`, `{"type": "array", "items": {"type": "string"}}`,
			TypeChanged, semver.Major, "#/items/type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			changes, err := CompareSchemas(decode(t, tc.old), decode(t, tc.new))
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) != 1 {
				t.Fatalf("want one change, got %+v", changes)
			}
			c := changes[0]
			if c.Kind != tc.kind || c.Bump != tc.bump || c.Path != tc.path {
				t.Errorf("got %s %s at %s (%s), want %s %s at %s", c.Kind, c.Bump, c.Path, c.Detail, tc.kind, tc.bump, tc.path)
			}
			if RequiredBump(changes) != tc.bump {
				t.Errorf("required bump %s", RequiredBump(changes))
			}
		})
	}
}

func TestIdenticalAndRecursiveSchemas(t *testing.T) {
	t.Parallel()
	recursive := `{"$ref": "#/definitions/Node", "definitions": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}}}}}`
	changes, err := CompareSchemas(decode(t, recursive), decode(t, recursive))
	if err != nil || len(changes) != 0 {
		t.Fatalf("%v %+v", err, changes)
	}
}

func TestBadSchemas(t *testing.T) {
	t.Parallel()
	good := `{"type": "object"}`
	for name, tc := range map[string]struct{ schema, want string }{
		"dangling $ref":  {`{"$ref": "#/definitions/Missing"}`, `$ref "#/definitions/Missing" names a definition that does not exist`},
		"cyclic $ref":    {`{"$ref": "#/definitions/A", "definitions": {"A": {"$ref": "#/definitions/B"}, "B": {"$ref": "#/definitions/A"}}}`, "cyclic"},
		"not an object":  {`"string"`, "not a JSON Schema object"},
		"bad subschema":  {`{"properties": {"a": 5}}`, "#/properties/a: a schema must be an object or a boolean, not a number"},
		"remote $ref":    {`{"$ref": "http://example.com/s.json"}`, "not a local #/definitions reference"},
		"bad properties": {`{"properties": []}`, "properties is an array, not an object"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := CompareSchemas(decode(t, good), decode(t, tc.schema))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "new schema") {
				t.Errorf("error %v, want one naming the new schema and saying %q", err, tc.want)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	v := semver.MustParse
	for _, tc := range []struct {
		required semver.Bump
		old, new string
		want     Verdict
	}{
		{semver.Major, "1.2.0", "2.0.0", OK}, {semver.Major, "1.2.0", "1.3.0", UnderBumped}, {semver.Minor, "1.2.0", "1.2.0", NoBump},
		{semver.Patch, "1.2.0", "2.0.0", OverBumped}, {semver.None, "1.2.0", "1.2.0", OK}, {semver.Minor, "1.2.0", "1.3.0", OK},
	} {
		got, err := Judge(tc.required, v(tc.old), v(tc.new))
		if err != nil || got != tc.want {
			t.Errorf("%s %s→%s: %s %v, want %s", tc.required, tc.old, tc.new, got, err, tc.want)
		}
	}
	if _, err := Judge(semver.Major, v("2.0.0"), v("1.0.0")); err == nil {
		t.Error("a lower declared version must be an error")
	}
}

// FuzzCompareSchemas: arbitrary JSON never panics the walker.
func FuzzCompareSchemas(f *testing.F) {
	f.Add(stack(`"a": {"type": "string"}`), stack(`"b": {"type": "number"}`, "b"))
	f.Add(`{"$ref": "#/definitions/A", "definitions": {"A": {"anyOf": [{"$ref": "#/definitions/A"}]}}}`, `true`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var x, y any
		if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
			return
		}
		_, _ = CompareSchemas(x, y)
	})
}
