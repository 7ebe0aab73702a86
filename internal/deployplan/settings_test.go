package deployplan

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestParseSettings(t *testing.T) {
	parse := func(src string) (Settings, error) {
		var doc struct {
			Deploy yaml.Node `yaml:"deploy"`
		}
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		return ParseSettings(".cdkbot.yml", &doc.Deploy)
	}
	s, err := parse("aspects: []\ndeploy:\n  waves: [pipeline-*, vpc-*, service-*]\n  concurrency: 6\n  require-approval: broadening\n")
	if err != nil || strings.Join(s.Waves, " ") != "pipeline-* vpc-* service-*" || s.Concurrency != 6 || s.RequireApproval != "broadening" {
		t.Errorf("%+v %v", s, err)
	}
	if s, err := parse("aspects: []\n"); err != nil || s.Waves != nil || s.Concurrency != 0 {
		t.Errorf("no section: %+v %v", s, err)
	}
	for src, want := range map[string]string{
		"deploy:\n  wave: [a]\n":                ".cdkbot.yml: line 2: deploy.wave is not a setting (allowed: waves, concurrency, require-approval)",
		"deploy:\n  waves: ['[']\n":             `.cdkbot.yml: deploy.waves: "[" is not a valid glob`,
		"deploy:\n  concurrency: -1\n":          ".cdkbot.yml: deploy.concurrency is -1: give at least 1",
		"deploy:\n  concurrency: many\n":        ".cdkbot.yml: deploy: line 2: cannot unmarshal !!str `many` into int",
		"deploy:\n  require-approval: always\n": `.cdkbot.yml: deploy.require-approval is "always": use never or broadening`,
		"deploy: [waves]\n":                     ".cdkbot.yml: line 1: deploy must be a mapping with waves, concurrency, require-approval",
	} {
		if _, err := parse(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", src, err, want)
		}
	}
}
