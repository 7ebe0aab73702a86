package aspects

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

const shop = "../cli/demo/after"

func runConfig(t *testing.T, dir, yml string) (*App, *Report) {
	t.Helper()
	cfg, _, err := Load(".cdkbot.yml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	app := loadApp(t, dir)
	rep, err := Run(app, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return app, rep
}

func violations(rep *Report, rule string) []Violation {
	var out []Violation
	for _, v := range rep.Violations {
		if v.Rule == rule && !v.Suppressed {
			out = append(out, v)
		}
	}
	return out
}

// require-tags after tags passes whatever the order in the configuration file, and fails when
// tags is given a priority above 1000 (it then runs after the check).
func TestTagsBeforeRequireTags(t *testing.T) {
	t.Parallel()
	for name, yml := range map[string]string{
		"tags first":  "aspects:\n  - use: tags\n    with: { tags: { team: core } }\n  - use: require-tags\n    with: { keys: [team] }\n",
		"check first": "aspects:\n  - use: require-tags\n    with: { keys: [team] }\n  - use: tags\n    with: { tags: { team: core } }\n",
	} {
		_, rep := runConfig(t, shop, yml)
		if v := violations(rep, "require-tags"); len(v) != 0 || rep.Failed() {
			t.Errorf("%s: %d require-tags violations: %+v", name, len(v), v)
		}
		if len(rep.Mutations) == 0 {
			t.Errorf("%s: tags changed nothing", name)
		}
	}
	_, rep := runConfig(t, shop, "aspects:\n  - use: tags\n    priority: 1200\n    with: { tags: { team: core } }\n  - use: require-tags\n    with: { keys: [team] }\n")
	if v := violations(rep, "require-tags"); len(v) == 0 || !rep.Failed() || !strings.Contains(v[0].Message, "missing tag(s): team") {
		t.Errorf("tags at priority 1200 must leave require-tags failing: %+v", rep.Violations)
	}
}

func TestAccessLogBucketIsTaggedWithStabilizationOnly(t *testing.T) {
	t.Parallel()
	const yml = "aspects:\n  - use: tags\n    with: { tags: { team: core } }\n  - use: bucket-access-logging\n"
	for _, stabilize := range []bool{true, false} {
		cfgText := yml
		if !stabilize {
			cfgText += "stabilization: false\n"
		}
		app, rep := runConfig(t, shop, cfgText)
		logs := cfn.AsObject(get(get(app.ChangedTemplates()["ShopData"], "Resources"), accessLogsID))
		if logs == nil {
			t.Fatalf("no log bucket added: %+v", rep.Mutations)
		}
		tagged := strings.Contains(cfn.JSON(get(logs, "Properties")), `"Key":"team","Value":"core"`)
		if tagged != stabilize {
			t.Errorf("stabilization=%v: log bucket tagged=%v", stabilize, tagged)
		}
		receipts := cfn.JSON(get(get(get(app.ChangedTemplates()["ShopData"], "Resources"), "Receipts59C0D3E0"), "Properties"))
		if !strings.Contains(receipts, `"LoggingConfiguration":{"DestinationBucketName":{"Ref":"`+accessLogsID+`"}`) {
			t.Errorf("bucket not wired to the log bucket: %s", receipts)
		}
	}
}

func TestReadOnlyRulesOnARealApp(t *testing.T) {
	t.Parallel()
	_, rep := runConfig(t, shop, `aspects:
  - use: require-encryption
  - use: require-bucket-versioning
  - use: block-public-buckets
  - use: no-wildcard-iam
  - use: retain-stateful
    severity: warning
`)
	want := map[string]string{
		"require-encryption":   "ShopData/Orders/Resource: table does not enable SSESpecification.SSEEnabled",
		"block-public-buckets": "ShopData/Receipts/Resource: public access is not fully blocked",
	}
	for rule, text := range want {
		found := false
		for _, v := range violations(rep, rule) {
			found = found || strings.Contains(v.Path+": "+v.Message, text)
		}
		if !found {
			t.Errorf("%s: no violation %q in %+v", rule, text, violations(rep, rule))
		}
	}
	if len(violations(rep, "require-bucket-versioning")) != 0 {
		t.Errorf("the after variant versions its bucket: %+v", violations(rep, "require-bucket-versioning"))
	}
	for _, v := range violations(rep, "retain-stateful") {
		if v.Severity != "warning" {
			t.Errorf("severity not applied: %+v", v)
		}
	}
	if len(violations(rep, "no-wildcard-iam")) != 0 {
		t.Errorf("the shop grants no wildcards: %+v", violations(rep, "no-wildcard-iam"))
	}
}

func TestWildcardIAMAndSuppressions(t *testing.T) {
	t.Parallel()
	root := &Node{}
	stack := newStack(t, root, "S")
	doc, _ := cfn.ParseJSON([]byte(`{"PolicyName": "p", "Roles": ["r"], "PolicyDocument": {"Statement": [
	  {"Effect": "Allow", "Action": "s3:*", "Resource": "*"}, {"Effect": "Allow", "Action": ["*"], "Resource": ["*"]},
	  {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}, {"Effect": "Deny", "Action": "*", "Resource": "*"}]}}`))
	must(stack.AddResource("Admin", "Admin", "AWS::IAM::Policy", cfn.AsObject(doc)))
	quiet := must(stack.AddResource("Quiet", "Quiet", "AWS::IAM::Policy", cfn.AsObject(cfn.Clone(doc))))
	meta, _ := cfn.ParseJSON([]byte(`{"cdkbot": {"suppress": [{"rule": "no-wildcard-iam", "reason": "break-glass role, reviewed by security"}]}}`))
	quiet.Resource.Set("Metadata", meta)
	cfg, _, err := Load("c.yml", []byte("aspects:\n  - use: no-wildcard-iam\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(&App{Root: root}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var admin, quietOnes int
	for _, v := range rep.Violations {
		switch v.LogicalID {
		case "Admin":
			admin++
		case "Quiet":
			if v.Suppressed && v.Reason == "break-glass role, reviewed by security" {
				quietOnes++
			}
		}
	}
	if admin != 2 || quietOnes != 2 || !rep.Failed() {
		t.Errorf("admin %d, suppressed %d: %+v", admin, quietOnes, rep.Violations)
	}
	cfg, _, _ = Load("c.yml", []byte("aspects:\n  - use: no-wildcard-iam\nsuppress:\n  - rule: no-wildcard-iam\n    path: S/*\n    reason: sandbox account\n"))
	for _, n := range root.Children[0].Children {
		n.local = nil
	}
	root.local = nil
	rep, _ = Run(&App{Root: root}, cfg, nil)
	if rep.Failed() {
		t.Errorf("config suppression did not apply: %+v", rep.Violations)
	}
}

func TestNoConfigChangesNothing(t *testing.T) {
	t.Parallel()
	app, rep := runConfig(t, shop, "")
	if len(app.ChangedTemplates()) != 0 || len(rep.Mutations) != 0 || len(rep.Violations) != 0 {
		t.Errorf("an empty configuration must change and report nothing: %+v", rep)
	}
}

func TestBadConfigs(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ yml, want string }{
		"unknown aspect":      {"aspects:\n  - use: no-fun\n", `line 2: aspects[0]: unknown aspect "no-fun"; known aspects: block-public-buckets`},
		"negative priority":   {"aspects:\n  - use: tags\n    priority: -5\n    with: { tags: { a: b } }\n", "priority -5 is negative"},
		"fractional priority": {"aspects:\n  - use: tags\n    priority: 1.5\n", `line 3: priority "1.5" must be a non-negative integer`},
		"unknown top key":     {"aspect:\n  - use: tags\n", `unknown key "aspect" (allowed here: aspects, stabilization, suppress, deploy, apps, synth)`},
		"unknown aspect key":  {"aspects:\n  - use: tags\n    colour: red\n", `unknown key "colour" (allowed here: use, with, priority, severity, scope)`},
		"unknown option":      {"aspects:\n  - use: require-tags\n    with: { key: [team] }\n", "with: line 1: field key not found"},
		"missing option":      {"aspects:\n  - use: require-tags\n", "list the required tag keys"},
		"no reason":           {"aspects: []\nsuppress:\n  - rule: require-tags\n    path: Prod/**\n", "has no reason; a reason is required"},
		"bad severity":        {"aspects:\n  - use: retain-stateful\n    severity: fatal\n", `severity "fatal" is not error or warning`},
	} {
		_, _, err := Load(".cdkbot.yml", []byte(tc.yml))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ".cdkbot.yml") {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func TestMatchPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{{"Prod/**", "Prod/Api/Table", true}, {"Prod/*", "Prod/Api/Table", false}, {"**/Table", "Prod/Api/Table", true},
		{"*/Api/*", "Prod/Api/Table", true}, {"Dev/**", "Prod/Api", false}, {"Prod/Ap*", "Prod/Api", true}} {
		if MatchPath(tc.glob, tc.path) != tc.want {
			t.Errorf("%s %s", tc.glob, tc.path)
		}
	}
}

// Every built-in runs over every compat fixture without error, on frameworks from 1.20 to today.
func TestAllBuiltinsOnEveryFixture(t *testing.T) {
	t.Parallel()
	all := `aspects:
  - use: tags
    with: { tags: { team: core } }
  - use: bucket-access-logging
  - use: require-tags
    with: { keys: [team] }
  - use: require-encryption
  - use: require-bucket-versioning
  - use: block-public-buckets
  - use: no-wildcard-iam
  - use: retain-stateful
`
	manifests, _ := filepath.Glob("../../compat-fixtures/*@*/*/manifest.json")
	for _, m := range manifests {
		_, rep := runConfig(t, filepath.Dir(m), all)
		if len(violations(rep, "require-tags")) != 0 {
			t.Errorf("%s: tags did not reach every taggable resource: %+v", m, violations(rep, "require-tags"))
		}
		if rep.Passes < 2 || rep.Passes > 3 {
			t.Errorf("%s: %d passes", m, rep.Passes)
		}
	}
}

func TestScopeLimitsAnAspect(t *testing.T) {
	t.Parallel()
	_, rep := runConfig(t, shop, "aspects:\n  - use: tags\n    scope: ShopData/**\n    with: { tags: { team: data } }\n")
	if len(rep.Mutations) == 0 {
		t.Fatal("nothing tagged")
	}
	for _, m := range rep.Mutations {
		if m.Stack != "ShopData" {
			t.Errorf("out of scope: %+v", m)
		}
	}
}

// no-open-ingress: the shop's HTTPS rule from anywhere passes by default (a web port) and is
// caught when only port 80 may face the internet; the internal rule never is.
func TestOpenIngressRule(t *testing.T) {
	t.Parallel()
	_, rep := runConfig(t, shop, "aspects:\n  - use: no-open-ingress\n")
	if v := violations(rep, "no-open-ingress"); len(v) != 0 {
		t.Errorf("default allows 80 and 443: %+v", v)
	}
	_, rep = runConfig(t, shop, "aspects:\n  - use: no-open-ingress\n    with: { allow: [80] }\n")
	v := violations(rep, "no-open-ingress")
	if len(v) != 1 || v[0].Message != "opens port 443 to the internet (0.0.0.0/0)" || v[0].Severity != "error" {
		t.Errorf("allow 80 only: %+v", v)
	}
}
