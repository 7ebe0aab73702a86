package config

import (
	"fmt"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Apps is the apps section of .cdkbot.yml: which CDK apps a repository holds and the
// environments each is synthesized for. Without a list, every cdk.json of the repository is an
// app (minus Ignore), each with the section's Context.
type Apps struct {
	// Ignore are repository path globs (* one segment, ** any number) whose cdk.json files are
	// not apps: examples, test fixtures.
	Ignore []string
	// Context gives each discovered app one environment per combination of values
	// (stage: [dev, prod] is two: stage=dev and stage=prod).
	Context map[string][]string
	// List names the apps instead of discovering them.
	List []App
}

// App is one entry of apps.list.
type App struct {
	Name    string              `yaml:"name"`
	Dir     string              `yaml:"dir"`
	Context map[string][]string `yaml:"context"`
	Line    int                 `yaml:"-"`
}

var (
	appsKeys = []string{"ignore", "context", "list"}
	appKeys  = []string{"name", "dir", "context"}
)

// ParseApps reads the apps section of a configuration file (the rest of the file is Parse's).
// A file without one is the zero Apps: discover every app, one environment each.
func ParseApps(file string, data []byte) (Apps, error) {
	if len(data) > MaxBytes {
		return Apps{}, fmt.Errorf("%s: %d bytes; a configuration is at most %d", file, len(data), MaxBytes)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Apps{}, yamlError(file, err)
	}
	if err := checkBounds(file, &root); err != nil {
		return Apps{}, err
	}
	if len(root.Content) == 0 {
		return Apps{}, nil
	}
	top := resolve(root.Content[0])
	if top.Kind != yaml.MappingNode {
		return Apps{}, nil // Parse says what is wrong with the file
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "apps" {
			return parseApps(file, top.Content[i+1])
		}
	}
	return Apps{}, nil
}

// parseApps reads an apps section held as a yaml node; a zero node means there is none.
func parseApps(file string, n *yaml.Node) (Apps, error) {
	var a Apps
	n, err := section(file, "apps", n, appsKeys)
	if n == nil || err != nil {
		return a, err
	}
	var raw struct {
		Ignore  []string            `yaml:"ignore"`
		Context map[string][]string `yaml:"context"`
		List    []App               `yaml:"list"`
	}
	if l := mapValue(n, "list"); l != nil && resolve(l).Kind == yaml.SequenceNode {
		for i, e := range resolve(l).Content {
			if e = resolve(e); e.Kind == yaml.MappingNode {
				if err := knownKeys(file, fmt.Sprintf("apps.list[%d]", i), e, appKeys); err != nil {
					return a, err
				}
			}
		}
	}
	if err := n.Decode(&raw); err != nil {
		return a, fmt.Errorf("%s: apps: %s", file, yamlMessage(err))
	}
	for _, g := range raw.Ignore {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return a, fmt.Errorf("%s: apps.ignore: %q is not a valid glob", file, g)
		}
	}
	if err := checkContext(file, "apps.context", raw.Context); err != nil {
		return a, err
	}
	lines := entryLines(n, "list")
	names, dirs := map[string]bool{}, map[string]bool{}
	for i, app := range raw.List {
		if i < len(lines) {
			app.Line = lines[i]
		}
		where := fmt.Sprintf("%s: line %d: apps.list[%d]", file, app.Line, i)
		app.Dir = strings.Trim(path.Clean("/"+app.Dir), "/")
		switch {
		case !isName(app.Name, 63, "._-"):
			return a, fmt.Errorf("%s: name %q: give letters, digits, '.', '_' or '-' (at most 63)", where, app.Name)
		case names[app.Name]:
			return a, fmt.Errorf("%s: a second app named %q", where, app.Name)
		case dirs[app.Dir] && len(app.Context) == 0:
			return a, fmt.Errorf("%s: a second app in %q with the same environments", where, app.Dir)
		}
		if err := checkContext(file, fmt.Sprintf("apps.list[%d].context", i), app.Context); err != nil {
			return a, err
		}
		names[app.Name], dirs[app.Dir] = true, true
		a.List = append(a.List, app)
	}
	a.Ignore, a.Context = raw.Ignore, raw.Context
	return a, nil
}

// checkContext refuses context keys and values that cannot be passed to an app or named in a
// job: each key a plain name, each value a non-empty line, no key without values.
func checkContext(file, where string, ctx map[string][]string) error {
	for k, vs := range ctx {
		if !isName(k, 128, ":._-") {
			return fmt.Errorf("%s: %s: %q is not a context key cdkbot passes (letters, digits, ':', '.', '_', '-')",
				file, where, k)
		}
		if len(vs) == 0 {
			return fmt.Errorf("%s: %s.%s: give at least one value", file, where, k)
		}
		seen := map[string]bool{}
		for _, v := range vs {
			if v == "" || len(v) > 128 || strings.ContainsAny(v, "\n\r,=/") || seen[v] {
				return fmt.Errorf("%s: %s.%s: %q: give distinct one-line values without ',', '=' or '/'",
					file, where, k, v)
			}
			seen[v] = true
		}
	}
	return nil
}

// knownKeys refuses a key of mapping n (at where) that is not one of keys.
func knownKeys(file, where string, n *yaml.Node, keys []string) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !contains(keys, k.Value) {
			return fmt.Errorf("%s: line %d: %s.%s is not a setting (allowed: %s)",
				file, k.Line, where, k.Value, strings.Join(keys, ", "))
		}
	}
	return nil
}

// mapValue is the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// isName says whether s is 1 to max characters, a letter or digit first, then letters, digits
// and the punctuation given. Checked by hand: the regular expression's counted repetition took
// 0.6 ms to compile at every start of the process.
func isName(s string, max int, punctuation string) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || strings.IndexByte(punctuation, c) < 0) {
			return false
		}
	}
	return true
}
