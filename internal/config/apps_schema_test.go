package config

import "testing"

// The schema's apps section accepts and refuses what Parse does.
func TestAppsSchemaAgreesWithParse(t *testing.T) {
	t.Parallel()
	sch := compileSchema(t)
	for name, tc := range map[string]struct {
		yml   string
		valid bool
	}{
		"discovered":    {"apps:\n  ignore: [examples/**]\n  context: { stage: [dev, prod] }\n", true},
		"listed":        {"apps:\n  list:\n    - { name: net, dir: infra/net, context: { stage: [prod] } }\n", true},
		"empty":         {"apps: {}\n", true},
		"unknown key":   {"apps:\n  lists: []\n", false},
		"entry key":     {"apps:\n  list:\n    - { name: a, path: x }\n", false},
		"bad name":      {"apps:\n  list:\n    - { name: 'a b' }\n", false},
		"no values":     {"apps:\n  context: { stage: [] }\n", false},
		"twice a value": {"apps:\n  context: { stage: [a, a] }\n", false},
		"comma value":   {"apps:\n  context: { stage: ['a,b'] }\n", false},
		"bad key":       {"apps:\n  context: { 'a b': [x] }\n", false},
		"a list":        {"apps: [a]\n", false},
	} {
		_, parseErr := Parse(".cdkbot.yml", []byte(tc.yml))
		schemaErr := sch.Validate(instance(t, tc.yml))
		if (parseErr == nil) != tc.valid || (schemaErr == nil) != tc.valid {
			t.Errorf("%s: want valid=%v; Parse: %v; schema: %v", name, tc.valid, parseErr, schemaErr)
		}
	}
}
