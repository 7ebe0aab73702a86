package deployplan

import (
	"fmt"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Settings are the deploy section of .cdkbot.yml: what a team sets once instead of on every
// command line. Flags and action inputs given explicitly win.
type Settings struct {
	// Waves are globs: matching stacks deploy first, wave by wave (e.g. vpc-*, then service-*).
	Waves []string `yaml:"waves"`
	// Concurrency is the number of stacks deployed at once; 0 leaves the default.
	Concurrency int `yaml:"concurrency"`
	// RequireApproval is never or broadening; "" leaves the default.
	RequireApproval string `yaml:"require-approval"`
}

var settingKeys = []string{"waves", "concurrency", "require-approval"}

// ParseSettings reads the deploy section (a zero node means there is none); errors name the
// file, the line and the key.
func ParseSettings(file string, n *yaml.Node) (Settings, error) {
	var s Settings
	if n == nil || n.Kind == 0 {
		return s, nil
	}
	if n.Kind != yaml.MappingNode {
		return s, fmt.Errorf("%s: line %d: deploy must be a mapping with %s", file, n.Line, strings.Join(settingKeys, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		known := false
		for _, key := range settingKeys {
			known = known || k.Value == key
		}
		if !known {
			return s, fmt.Errorf("%s: line %d: deploy.%s is not a setting (allowed: %s)", file, k.Line, k.Value, strings.Join(settingKeys, ", "))
		}
	}
	if err := n.Decode(&s); err != nil {
		msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "unmarshal errors:\n  ", "")
		return s, fmt.Errorf("%s: deploy: %s", file, msg)
	}
	for _, g := range s.Waves {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return s, fmt.Errorf("%s: deploy.waves: %q is not a valid glob", file, g)
		}
	}
	if s.Concurrency < 0 {
		return s, fmt.Errorf("%s: deploy.concurrency is %d: give at least 1", file, s.Concurrency)
	}
	if s.RequireApproval != "" && s.RequireApproval != "never" && s.RequireApproval != "broadening" {
		return s, fmt.Errorf("%s: deploy.require-approval is %q: use never or broadening", file, s.RequireApproval)
	}
	return s, nil
}
