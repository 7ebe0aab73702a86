package aspects

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cdkbot/cdkbot/internal/config"
)

// Config is the policy of a .cdkbot.yml, checked against the built-in aspects: which aspects run,
// with what options, priorities, severities and scopes, and which findings are suppressed. Load
// makes one from the file's bytes, NewConfig from a parsed file; the zero value runs nothing.
type Config struct {
	Aspects       []config.Aspect
	Stabilization *bool
	Suppress      []config.Suppression
}

// Stabilizing reports whether passes repeat until the tree stops changing (the default).
func (c *Config) Stabilizing() bool { return c.Stabilization == nil || *c.Stabilization }

// Load reads a .cdkbot.yml (config.Parse) and checks its policy against the built-in aspects
// (NewConfig): what a command needs from the file, in one call. Errors name the file, the line
// and the key.
func Load(file string, data []byte) (*Config, config.Deploy, error) {
	f, err := config.Parse(file, data)
	if err != nil {
		return nil, config.Deploy{}, err
	}
	cfg, err := NewConfig(f)
	if err != nil {
		return nil, config.Deploy{}, err
	}
	return cfg, f.Deploy, nil
}

// NewConfig checks the policy of a parsed file: every aspect names a built-in and its options
// suit it, and every suppression names a built-in rule. Errors name the file, line and entry.
func NewConfig(f *config.File) (*Config, error) {
	for i, a := range f.Aspects {
		where := fmt.Sprintf("%s: line %d: aspects[%d]", f.Name, a.Line, i)
		b, ok := builtins[a.Use]
		if !ok {
			return nil, fmt.Errorf("%s: unknown aspect %q; known aspects: %s", where, a.Use, strings.Join(builtinNames(), ", "))
		}
		if _, err := b.options(f.Name, a.With); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, a.Use, err)
		}
	}
	for i, s := range f.Suppress {
		if _, ok := builtins[s.Rule]; !ok {
			return nil, fmt.Errorf("%s: suppress[%d]: unknown rule %q", f.Name, i, s.Rule)
		}
	}
	return &Config{Aspects: f.Aspects, Stabilization: f.Stabilization, Suppress: f.Suppress}, nil
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
		return fmt.Errorf("with: %s",
			strings.TrimPrefix(strings.ReplaceAll(err.Error(), "unmarshal errors:\n  ", ""), "yaml: "))
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
