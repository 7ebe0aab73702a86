package aspects

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is the policy configuration (.cdkbot.yml): which aspects run, with what options,
// priorities, severities and scopes, and which findings are suppressed.
type Config struct {
	Aspects       []AspectConfig `yaml:"aspects"`
	Stabilization *bool          `yaml:"stabilization"`
	Suppress      []Suppression  `yaml:"suppress"`
	// Deploy is the file's deploy section, which `cdkbot deploy` reads (deployplan.ParseSettings);
	// it is accepted here so one file configures both.
	Deploy yaml.Node `yaml:"deploy"`
}

// AspectConfig configures one built-in aspect.
type AspectConfig struct {
	Use      string    `yaml:"use"`
	With     yaml.Node `yaml:"with"`
	Priority *Priority `yaml:"priority"`
	Severity string    `yaml:"severity"`
	Scope    string    `yaml:"scope"`
	line     int
}

// Priority is an aspect priority from the configuration: a non-negative integer, nothing else
// (yaml would otherwise read 1.5 as 1).
type Priority int

// UnmarshalYAML accepts integers only.
func (p *Priority) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return fmt.Errorf("line %d: priority %q must be a non-negative integer", n.Line, n.Value)
	}
	var i int
	if err := n.Decode(&i); err != nil {
		return fmt.Errorf("line %d: priority %q must be a non-negative integer", n.Line, n.Value)
	}
	*p = Priority(i)
	return nil
}

// Suppression silences a rule on constructs matching a path glob; the reason is shown in reports.
type Suppression struct {
	Rule   string `yaml:"rule"`
	Path   string `yaml:"path"`
	Reason string `yaml:"reason"`
}

// Stabilizing reports whether passes repeat until the tree stops changing (the default).
func (c *Config) Stabilizing() bool { return c.Stabilization == nil || *c.Stabilization }

// ParseConfig reads a configuration; errors name the file, the line and the key.
func ParseConfig(file string, data []byte) (*Config, error) {
	cfg := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, configError(file, err)
	}
	var doc yaml.Node
	_ = yaml.Unmarshal(data, &doc)
	lines := aspectLines(&doc)
	for i := range cfg.Aspects {
		a := &cfg.Aspects[i]
		if i < len(lines) {
			a.line = lines[i]
		}
		where := fmt.Sprintf("%s: line %d: aspects[%d]", file, a.line, i)
		if _, ok := builtins[a.Use]; !ok {
			return nil, fmt.Errorf("%s: unknown aspect %q; known aspects: %s", where, a.Use, strings.Join(builtinNames(), ", "))
		}
		if a.Priority != nil && int(*a.Priority) < 0 {
			return nil, fmt.Errorf("%s: priority %d is negative; use a non-negative integer (200 mutating, 600 default, 1000 read-only)", where, *a.Priority)
		}
		if a.Severity != "" && a.Severity != "error" && a.Severity != "warning" {
			return nil, fmt.Errorf("%s: severity %q is not error or warning", where, a.Severity)
		}
		if _, err := builtins[a.Use].options(file, a.With); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, a.Use, err)
		}
	}
	for i, s := range cfg.Suppress {
		where := fmt.Sprintf("%s: suppress[%d]", file, i)
		switch {
		case s.Rule == "":
			return nil, fmt.Errorf("%s: a suppression needs the rule it silences", where)
		case strings.TrimSpace(s.Reason) == "":
			return nil, fmt.Errorf("%s: suppression of %s on %q has no reason; a reason is required and is shown in reports", where, s.Rule, s.Path)
		}
		if _, ok := builtins[s.Rule]; !ok {
			return nil, fmt.Errorf("%s: unknown rule %q", where, s.Rule)
		}
	}
	return cfg, nil
}

// configError rewrites yaml's messages ("field colour not found in type aspects.AspectConfig")
// into ones that name the file and say what is allowed.
func configError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	if i := strings.Index(msg, "field "); i >= 0 && strings.Contains(msg, " not found in type ") {
		key := strings.Fields(msg[i+len("field "):])[0]
		known := map[string]string{"aspects.Config": "aspects, stabilization, suppress, deploy", "aspects.AspectConfig": "use, with, priority, severity, scope",
			"aspects.Suppression": "rule, path, reason"}
		for typ, keys := range known {
			if strings.Contains(msg, typ) {
				return fmt.Errorf("%s: %s: unknown key %q (allowed here: %s)", file, strings.TrimSpace(msg[:i]), key, keys)
			}
		}
	}
	if strings.Contains(msg, "cannot unmarshal") && strings.Contains(msg, "into int") {
		return fmt.Errorf("%s: %s: priority must be a non-negative integer", file, msg)
	}
	return fmt.Errorf("%s: %s", file, msg)
}

func aspectLines(doc *yaml.Node) []int {
	if len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "aspects" {
			var out []int
			for _, item := range m.Content[i+1].Content {
				out = append(out, item.Line)
			}
			return out
		}
	}
	return nil
}

// decodeOptions strictly decodes an aspect's "with" block.
func decodeOptions(file string, node yaml.Node, into any) error {
	if node.Kind == 0 {
		return nil
	}
	raw, err := yaml.Marshal(&node)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(into); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("with: %s", strings.TrimPrefix(strings.ReplaceAll(err.Error(), "unmarshal errors:\n  ", ""), "yaml: "))
	}
	return nil
}

func builtinNames() []string {
	out := make([]string, 0, len(builtins))
	for k := range builtins {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
