package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseApps(t *testing.T) {
	yml := `aspects: []
apps:
  ignore: [examples/**]
  context: { stage: [dev, prod] }
  list:
    - name: network
      dir: ./infra/network/
    - name: shop
      dir: services/shop/infra
      context: { stage: [prod] }
`
	got, err := ParseApps(".cdkbot.yml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	want := Apps{Ignore: []string{"examples/**"}, Context: map[string][]string{"stage": {"dev", "prod"}},
		List: []App{{Name: "network", Dir: "infra/network", Line: 6},
			{Name: "shop", Dir: "services/shop/infra", Context: map[string][]string{"stage": {"prod"}}, Line: 8}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if a, err := ParseApps(".cdkbot.yml", []byte("aspects: []\n")); err != nil || !reflect.DeepEqual(a, Apps{}) {
		t.Errorf("no section: %+v %v", a, err)
	}
}

// Every mistake names the file, and where it can, the line and what is allowed.
func TestParseAppsTakesNamesAtTheirLongest(t *testing.T) {
	yml := "apps:\n  context: { " + strings.Repeat("k", 127) + ".: [x] }\n  list:\n    - name: " +
		strings.Repeat("a", 62) + "_\n"
	if _, err := ParseApps(".cdkbot.yml", []byte(yml)); err != nil {
		t.Fatal(err)
	}
}

func TestParseAppsErrors(t *testing.T) {
	for yml, want := range map[string]string{
		"apps: [a]\n":          "line 1: apps must be a mapping",
		"apps:\n  lists: []\n": "line 2: apps.lists is not a setting (allowed: ignore, context, list)",
		"apps:\n  list:\n    - name: a\n      path: x\n":                "line 4: apps.list[0].path is not a setting",
		"apps:\n  ignore: ['[']\n":                                      `apps.ignore: "[" is not a valid glob`,
		"apps:\n  list:\n    - name: a b\n":                             `name "a b"`,
		"apps:\n  list:\n    - {name: a}\n    - {name: a, dir: x}\n":    `a second app named "a"`,
		"apps:\n  context: { stage: [] }\n":                             "apps.context.stage: give at least one value",
		"apps:\n  context: { stage: [a, a] }\n":                         `"a": give distinct one-line values`,
		"apps:\n  context: { stage: ['a,b'] }\n":                        `"a,b"`,
		"apps:\n  context: { 'a b': [x] }\n":                            `"a b" is not a context key`,
		"apps:\n  context: { stage: dev }\n":                            ".cdkbot.yml: apps:",
		"apps:\n  list:\n    - name: " + strings.Repeat("a", 64) + "\n": "at most 63",
		"apps:\n  list:\n    - name: -a\n":                              `name "-a"`,
		"apps:\n  context: { " + strings.Repeat("k", 129) + ": [x] }\n": "is not a context key",
		"apps:\n  context: { ':a': [x] }\n":                             `":a" is not a context key`,
	} {
		_, err := ParseApps(".cdkbot.yml", []byte(yml))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), ".cdkbot.yml") {
			t.Errorf("%q: got %v, want %q", yml, err, want)
		}
	}
}
