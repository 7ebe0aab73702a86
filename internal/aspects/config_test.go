package aspects

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/cdkbot/cdkbot/internal/config"
)

// The schema's aspect names (internal/config cannot know them) are exactly the built-ins: add or
// rename a built-in and this fails until internal/config/cdkbot.schema.json says so too, with
// the options the aspect takes.
func TestSchemaListsTheBuiltins(t *testing.T) {
	t.Parallel()
	var s struct {
		Definitions struct {
			AspectName struct {
				Enum []string `json:"enum"`
			} `json:"aspectName"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(config.Schema(), &s); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(s.Definitions.AspectName.Enum)); !slices.Equal(got, builtinNames()) {
		t.Errorf("the schema names %v; the built-ins are %v", got, builtinNames())
	}
}

// The schema and Load agree on what `use` names and what each aspect's `with` may hold.
func TestSchemaAgreesWithLoad(t *testing.T) {
	t.Parallel()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(config.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(config.SchemaURL, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(config.SchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	every := "aspects:\n"
	for _, name := range builtinNames() {
		every += "  - use: " + name + "\n"
		switch name {
		case "tags":
			every += "    with: { tags: { team: core } }\n"
		case "require-tags":
			every += "    with: { keys: [team] }\n"
		}
	}
	cases := map[string]struct {
		yml   string
		valid bool
	}{
		"every built-in":         {every, true},
		"no-open-ingress ports":  {"aspects:\n  - use: no-open-ingress\n    with: { allow: [443, 8443] }\n", true},
		"empty options":          {"aspects:\n  - use: retain-stateful\n    with: {}\n", true},
		"a suppressed rule":      {"suppress:\n  - rule: no-wildcard-iam\n    path: Sandbox/**\n    reason: sandbox account\n", true},
		"unknown aspect":         {"aspects:\n  - use: no-fun\n", false},
		"no use":                 {"aspects:\n  - severity: warning\n", false},
		"unknown rule":           {"suppress:\n  - rule: no-fun\n    reason: x\n", false},
		"tags without options":   {"aspects:\n  - use: tags\n", false},
		"tags without tags":      {"aspects:\n  - use: tags\n    with: { tags: {} }\n", false},
		"require-tags, no keys":  {"aspects:\n  - use: require-tags\n", false},
		"require-tags, key":      {"aspects:\n  - use: require-tags\n    with: { key: [team] }\n", false},
		"ports as words":         {"aspects:\n  - use: no-open-ingress\n    with: { allow: [https] }\n", false},
		"options nobody takes":   {"aspects:\n  - use: retain-stateful\n    with: { really: true }\n", false},
		"options of another one": {"aspects:\n  - use: require-encryption\n    with: { keys: [team] }\n", false},
	}
	// Every .cdkbot.yml the README shows (a yaml block whose first line is "# .cdkbot.yml") is
	// read by both: what users copy works.
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples := 0
	for i, block := range strings.Split(string(readme), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if strings.HasPrefix(block, "# .cdkbot.yml\n") {
			cases[fmt.Sprintf("README example %d", i)] = struct {
				yml   string
				valid bool
			}{block, true}
			examples++
		}
	}
	if examples < 2 {
		t.Errorf("found %d .cdkbot.yml examples in the README, want the policy and the deploy section", examples)
	}
	for name, tc := range cases {
		_, _, loadErr := Load(".cdkbot.yml", []byte(tc.yml))
		var v any
		if err := yaml.Unmarshal([]byte(tc.yml), &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		schemaErr := sch.Validate(inst)
		if (loadErr == nil) != tc.valid || (schemaErr == nil) != tc.valid {
			t.Errorf("%s: want valid=%v; Load: %v; schema: %v", name, tc.valid, loadErr, schemaErr)
		}
	}
}

// Load gives a command the checked policy and the deploy settings from one read of the file.
func TestLoad(t *testing.T) {
	t.Parallel()
	policy, deploy, err := Load("c.yml", []byte("aspects:\n  - use: require-tags\n    priority: 900\n    with: { keys: [team] }\nstabilization: false\ndeploy:\n  waves: [vpc-*]\n  concurrency: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(policy.Aspects) != 1 || policy.Aspects[0].Use != "require-tags" || *policy.Aspects[0].Priority != 900 || policy.Stabilizing() {
		t.Errorf("policy: %+v", policy)
	}
	if strings.Join(deploy.Waves, ",") != "vpc-*" || deploy.Concurrency != 2 || deploy.RequireApproval != "" {
		t.Errorf("deploy: %+v", deploy)
	}
	// A broken deploy section fails the whole file, wherever it is read.
	if _, _, err := Load("c.yml", []byte("aspects: []\ndeploy:\n  wave: [a]\n")); err == nil || !strings.Contains(err.Error(), "c.yml: line 3: deploy.wave is not a setting") {
		t.Errorf("deploy error: %v", err)
	}
}

// A Config made by hand is checked when it runs: an unknown aspect is an error, not a panic.
func TestRunRefusesAnUnknownAspect(t *testing.T) {
	t.Parallel()
	_, err := Run(&App{Root: &Node{}}, &Config{Aspects: []config.Aspect{{Use: "no-fun"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `aspects[0]: unknown aspect "no-fun"`) {
		t.Errorf("got %v", err)
	}
}
