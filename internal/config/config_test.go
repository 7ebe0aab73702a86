package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// readme is the configuration README.md shows, policy and deploy settings together.
const readme = `# .cdkbot.yml
aspects:
  - use: tags                         # mutating (200): adds tags to every taggable resource
    with: { tags: { team: core } }
  - use: bucket-access-logging        # mutating (200): one encrypted log bucket per stack for buckets without logging
  - use: require-tags                 # read-only (1000)
    with: { keys: [team] }
  - use: require-encryption           # S3, SQS, SNS, DynamoDB, RDS, EBS
    severity: warning                 # error (default) | warning
  - use: require-bucket-versioning
  - use: block-public-buckets         # all four public access blocks; no bucket policy open to "*"
  - use: no-wildcard-iam              # Allow "*" or "service:*" on Resource "*"
  - use: no-open-ingress              # ingress from 0.0.0.0/0 or ::/0 on a port other than 80/443
    with: { allow: [443] }            # the ports that may face the internet (default 80 and 443)
  - use: retain-stateful              # stateful types need DeletionPolicy and UpdateReplacePolicy Retain/Snapshot
    scope: Prod/**                    # construct path glob: * one segment, ** any
    priority: 900                     # any non-negative integer
stabilization: true
suppress:
  - rule: retain-stateful
    path: Prod/DeadLetters/**
    reason: dead letters are disposable   # required, shown in reports
deploy:
  waves: [pipeline-*, vpc-*, service-*]   # default [pipeline-*]
  concurrency: 6                          # default 4
  require-approval: broadening            # default never
`

func TestParse(t *testing.T) {
	t.Parallel()
	f, err := Parse(".cdkbot.yml", []byte(readme))
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	for _, a := range f.Aspects {
		uses = append(uses, fmt.Sprintf("%s@%d", a.Use, a.Line))
	}
	if got := strings.Join(uses, " "); got != "tags@3 bucket-access-logging@5 require-tags@6 require-encryption@8 "+
		"require-bucket-versioning@10 block-public-buckets@11 no-wildcard-iam@12 no-open-ingress@13 retain-stateful@15" {
		t.Errorf("aspects: %s", got)
	}
	last := f.Aspects[len(f.Aspects)-1]
	if last.Priority == nil || *last.Priority != 900 || last.Scope != "Prod/**" || last.Severity != "" {
		t.Errorf("retain-stateful: %+v", last)
	}
	if f.Aspects[3].Severity != "warning" || f.Aspects[3].Priority != nil || f.Aspects[0].With.Kind == 0 || f.Aspects[1].With.Kind != 0 {
		t.Errorf("aspects: %+v", f.Aspects)
	}
	if !f.Stabilizing() || f.Name != ".cdkbot.yml" {
		t.Errorf("stabilization %v, name %q", f.Stabilizing(), f.Name)
	}
	if want := []Suppression{{Rule: "retain-stateful", Path: "Prod/DeadLetters/**", Reason: "dead letters are disposable", Line: 20}}; !reflect.DeepEqual(f.Suppress, want) {
		t.Errorf("suppress: %+v", f.Suppress)
	}
	if want := (Deploy{Waves: []string{"pipeline-*", "vpc-*", "service-*"}, Concurrency: 6, RequireApproval: "broadening"}); !reflect.DeepEqual(f.Deploy, want) {
		t.Errorf("deploy: %+v", f.Deploy)
	}
}

// Nothing, or only comments, is a file that configures nothing.
func TestParseEmpty(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"", "# nothing yet\n", "~\n", "aspects:\nsuppress:\nstabilization:\n"} {
		f, err := Parse("c.yml", []byte(src))
		if err != nil || len(f.Aspects) != 0 || len(f.Suppress) != 0 || !f.Stabilizing() || !reflect.DeepEqual(f.Deploy, Deploy{}) {
			t.Errorf("%q: %+v %v", src, f, err)
		}
	}
	f, err := Parse("c.yml", []byte("stabilization: false\n"))
	if err != nil || f.Stabilizing() {
		t.Errorf("stabilization: false: %+v %v", f, err)
	}
}

// Anchors are followed: a shared block keeps the line where it is used.
func TestParseAliases(t *testing.T) {
	t.Parallel()
	f, err := Parse("c.yml", []byte("x-team: &team { tags: { team: core } }\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown key "x-team"`) {
		t.Fatalf("unknown key with an anchor: %v", err)
	}
	f, err = Parse("c.yml", []byte("aspects:\n  - use: tags\n    with: &team { tags: { team: core } }\n  - use: tags\n    scope: Prod/**\n    with: *team\n"))
	if err != nil || len(f.Aspects) != 2 || f.Aspects[1].Line != 4 || f.Aspects[1].With.Kind != f.Aspects[0].With.Kind {
		t.Fatalf("%+v %v", f, err)
	}
}

// Every message names the file and says where and what; these are the messages users have
// seen since the aspects engine parsed the file.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ yml, want string }{
		"syntax":              {"aspects:\n  - use: tags\n   with: x\n", ".cdkbot.yml: line 1: did not find expected '-' indicator"},
		"not a mapping":       {"- use: tags\n", ".cdkbot.yml: line 1: the configuration must be a mapping with aspects, stabilization, suppress, deploy"},
		"unknown top key":     {"aspect:\n  - use: tags\n", `.cdkbot.yml: line 1: unknown key "aspect" (allowed here: aspects, stabilization, suppress, deploy, apps, synth)`},
		"unknown aspect key":  {"aspects:\n  - use: tags\n    colour: red\n", `.cdkbot.yml: line 3: unknown key "colour" (allowed here: use, with, priority, severity, scope)`},
		"unknown suppr. key":  {"suppress:\n  - rule: tags\n    reason: x\n    why: y\n", `.cdkbot.yml: line 4: unknown key "why" (allowed here: rule, path, reason)`},
		"negative priority":   {"aspects:\n  - use: tags\n    priority: -5\n", ".cdkbot.yml: line 2: aspects[0]: priority -5 is negative; use a non-negative integer (200 mutating, 600 default, 1000 read-only)"},
		"fractional priority": {"aspects:\n  - use: tags\n    priority: 1.5\n", `.cdkbot.yml: line 3: priority "1.5" must be a non-negative integer`},
		"string priority":     {"aspects:\n  - use: tags\n    priority: '5'\n", `.cdkbot.yml: line 3: priority "5" must be a non-negative integer`},
		"bad severity":        {"aspects:\n  - use: tags\n  - use: retain-stateful\n    severity: fatal\n", `.cdkbot.yml: line 3: aspects[1]: severity "fatal" is not error or warning`},
		"no rule":             {"suppress:\n  - path: Prod/**\n    reason: x\n", ".cdkbot.yml: suppress[0]: a suppression needs the rule it silences"},
		"no reason":           {"aspects: []\nsuppress:\n  - rule: require-tags\n    path: Prod/**\n    reason: ' '\n", `.cdkbot.yml: suppress[0]: suppression of require-tags on "Prod/**" has no reason; a reason is required and is shown in reports`},
		"stabilization":       {"stabilization: maybe\n", ".cdkbot.yml: line 1: cannot unmarshal !!str `maybe` into bool"},
		"deploy key":          {"deploy:\n  wave: [a]\n", ".cdkbot.yml: line 2: deploy.wave is not a setting (allowed: waves, concurrency, require-approval)"},
		"deploy glob":         {"deploy:\n  waves: ['[']\n", `.cdkbot.yml: deploy.waves: "[" is not a valid glob`},
		"deploy empty glob":   {"deploy:\n  waves: ['']\n", `.cdkbot.yml: deploy.waves: "" is not a valid glob`},
		"deploy concurrency":  {"deploy:\n  concurrency: -1\n", ".cdkbot.yml: deploy.concurrency is -1: give at least 1"},
		"deploy not a number": {"deploy:\n  concurrency: many\n", ".cdkbot.yml: deploy: line 2: cannot unmarshal !!str `many` into int"},
		"deploy approval":     {"deploy:\n  require-approval: always\n", `.cdkbot.yml: deploy.require-approval is "always": use never or broadening`},
		"deploy not a map":    {"deploy: [waves]\n", ".cdkbot.yml: line 1: deploy must be a mapping with waves, concurrency, require-approval"},
		"deploy null":         {"deploy:\n", ".cdkbot.yml: line 1: deploy must be a mapping with waves, concurrency, require-approval"},
		"duplicate key":       {"aspects: []\naspects: []\n", `.cdkbot.yml: line 2: mapping key "aspects" already defined at line 1`},
	} {
		_, err := Parse(".cdkbot.yml", []byte(tc.yml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// A hostile file stops at the bounds, quickly, with a message saying which.
func TestParseBounds(t *testing.T) {
	t.Parallel()
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'j'; i++ {
		laughs += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	for name, tc := range map[string]struct{ yml, want string }{
		"size":   {"# " + strings.Repeat("x", MaxBytes) + "\n", fmt.Sprintf("c.yml: %d bytes; a configuration is at most %d", MaxBytes+3, MaxBytes)},
		"depth":  {"aspects: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n", "c.yml: line 1: nested more than 64 levels deep"},
		"laughs": {laughs, "c.yml: line 5: more than 100000 values once aliases are expanded"},
		"cycle":  {"aspects: &a [*a]\n", `c.yml: line 1: anchor "a" contains an alias of itself`},
	} {
		_, err := Parse("c.yml", []byte(tc.yml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func TestParseDeployNode(t *testing.T) {
	t.Parallel()
	if d, err := parseDeploy("c.yml", nil); err != nil || !reflect.DeepEqual(d, Deploy{}) {
		t.Errorf("nil node: %+v %v", d, err)
	}
	f, err := Parse("c.yml", []byte("deploy: {}\n"))
	if err != nil || !reflect.DeepEqual(f.Deploy, Deploy{}) {
		t.Errorf("empty deploy: %+v %v", f, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{readme, "", "aspects: &a [*a]\n", "deploy: [waves]\n", "aspects:\n  - use: tags\n    priority: 1.5\n", "a: &a [x]\nb: [*a, *a]\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("c.yml", data)
		if (cfg == nil) == (err == nil) {
			t.Fatalf("Parse returned %v and %v", cfg, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "c.yml: ") {
			t.Fatalf("the message does not name the file: %v", err)
		}
	})
}

func ExampleParse() {
	f, err := Parse(".cdkbot.yml", []byte("aspects:\n  - use: require-tags\n    with: { keys: [team] }\ndeploy:\n  concurrency: 2\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Aspects[0].Use, "on line", f.Aspects[0].Line, "- concurrency", f.Deploy.Concurrency)
	_, err = Parse(".cdkbot.yml", []byte("aspects:\n  - use: require-tags\n    colour: red\n"))
	fmt.Println(err)
	// Output:
	// require-tags on line 2 - concurrency 2
	// .cdkbot.yml: line 3: unknown key "colour" (allowed here: use, with, priority, severity, scope)
}

// synth.exclude left out keeps cdkbot's defaults (nil); given empty, it excludes nothing.
func TestSynthExcludeGivenOrNot(t *testing.T) {
	t.Parallel()
	for yml, want := range map[string][]string{
		"":                                  nil,
		"synth: {}\n":                       nil,
		"synth:\n  exclude: []\n":           {},
		"synth:\n  exclude: ['*.md', x/]\n": {"*.md", "x/"},
	} {
		f, err := Parse(".cdkbot.yml", []byte(yml))
		if err != nil {
			t.Fatalf("%q: %v", yml, err)
		}
		if got := f.Synth.Exclude; (got == nil) != (want == nil) || !slices.Equal(got, want) {
			t.Errorf("%q: %#v, want %#v", yml, got, want)
		}
	}
	if _, err := Parse(".cdkbot.yml", []byte("synth:\n  exclude: docs\n")); err == nil || !strings.Contains(err.Error(), "line 2: synth.exclude must be a list") {
		t.Errorf("a word for a list: %v", err)
	}
}
