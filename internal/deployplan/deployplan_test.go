package deployplan

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

func load(t *testing.T, rel string) *assembly.Assembly {
	t.Helper()
	a, err := assembly.Load(os.DirFS(filepath.Join("../../compat-fixtures", rel)), rel)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func ids(p *Plan) string {
	var out []string
	for _, s := range p.Stacks {
		out = append(out, s.ID)
	}
	return strings.Join(out, " ")
}

// Every fixture, from every framework version, plans: roles resolved, dependencies first,
// each template deliverable.
func TestEveryFixturePlans(t *testing.T) {
	t.Parallel()
	dirs, _ := filepath.Glob("../../compat-fixtures/*@*/*/manifest.json")
	if len(dirs) < 20 {
		t.Fatalf("%d fixtures", len(dirs))
	}
	for _, m := range dirs {
		rel, _ := filepath.Rel("../../compat-fixtures", filepath.Dir(m))
		t.Run(rel, func(t *testing.T) {
			p, err := Build(load(t, rel), Options{DefaultAccount: "123456789012", DefaultRegion: "us-west-2", Stacks: []string{"**"},
				ToolkitBucket: "cdktoolkit-stagingbucket-abc", Revision: "0123456789abcdef"})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, s := range p.Stacks {
				for _, d := range s.DependsOn {
					if !seen[d] {
						t.Errorf("%s deploys before its dependency %s", s.ID, d)
					}
				}
				seen[s.ID] = true
				for _, v := range []string{s.AssumeRoleARN, s.ExecutionRoleARN, s.Template.URL, s.Env} {
					if strings.Contains(v, "${") || strings.Contains(v, "unknown-") {
						t.Errorf("%s: unresolved %q", s.ID, v)
					}
				}
				if s.Template.Inline == (s.Template.URL != "") {
					t.Errorf("%s: template neither or both inline and by URL: %+v", s.ID, s.Template)
				}
				if s.Template.Inline && s.Template.Size > MaxInlineTemplate {
					t.Errorf("%s: %d bytes inline", s.ID, s.Template.Size)
				}
				if s.ChangeSetName != "cdkbot-0123456789abcdef" {
					t.Errorf("change set name %q", s.ChangeSetName)
				}
			}
		})
	}
}

func TestModernStack(t *testing.T) {
	t.Parallel()
	p, err := Build(load(t, "aws-cdk-lib@2.276.0/multi-env"), Options{DefaultAccount: "333333333333", DefaultRegion: "ap-south-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(p); got != "Agnostic Europe Network Service" {
		t.Errorf("order: %s", got)
	}
	var svc, agn Stack
	for _, s := range p.Stacks {
		switch s.ID {
		case "Service":
			svc = s
		case "Agnostic":
			agn = s
		}
	}
	if svc.StackName != "service-us" || svc.AssumeRoleARN != "arn:aws:iam::111111111111:role/cdk-hnb659fds-deploy-role-111111111111-us-east-1" ||
		svc.ExecutionRoleARN != "arn:aws:iam::111111111111:role/cdk-hnb659fds-cfn-exec-role-111111111111-us-east-1" ||
		!svc.TerminationProtection || svc.Tags["team"] != "core" || strings.Join(svc.DependsOn, ",") != "Network" ||
		strings.Join(svc.Assets, ",") != "Service.assets" || svc.Level != 1 {
		t.Errorf("Service: %+v", svc)
	}
	if svc.Bootstrap == nil || svc.Bootstrap.Parameter != "/cdk-bootstrap/hnb659fds/version" || svc.Bootstrap.MinVersion < 6 {
		t.Errorf("bootstrap: %+v", svc.Bootstrap)
	}
	if !strings.HasPrefix(svc.Template.URL, "https://s3.us-east-1.amazonaws.com/cdk-hnb659fds-assets-111111111111-us-east-1/") || svc.Template.Inline {
		t.Errorf("template: %+v", svc.Template)
	}
	if agn.Env != "aws://333333333333/ap-south-1" || !strings.Contains(agn.AssumeRoleARN, "333333333333-ap-south-1") {
		t.Errorf("agnostic: %+v", agn)
	}
}

func TestSelectionDependenciesAndWaves(t *testing.T) {
	t.Parallel()
	a := load(t, "aws-cdk-lib@2.276.0/multi-env")
	o := Options{DefaultAccount: "1", DefaultRegion: "us-east-1"}
	for _, tc := range []struct {
		o    func(Options) Options
		want string
	}{
		{func(o Options) Options { o.Stacks = []string{"service-*"}; return o }, "Network Service"},
		{func(o Options) Options { o.Stacks = []string{"service-*"}; o.NoDeps = true; return o }, "Service"},
		{func(o Options) Options { o.Exclude = []string{"Agn*", "Europe"}; return o }, "Network Service"},
		// A first ("mutation") wave deploys before everything else; a wave pulls its
		// dependencies forward with it (Network for service-*).
		{func(o Options) Options { o.Waves = []string{"Europe"}; return o }, "Europe Agnostic Network Service"},
		{func(o Options) Options { o.Waves = []string{"service-*"}; return o }, "Network Service Agnostic Europe"},
	} {
		p, err := Build(a, tc.o(o))
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(p); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
	if _, err := Build(a, Options{Stacks: []string{"nope-*"}}); err == nil || !strings.Contains(err.Error(), "matches no stack") ||
		!strings.Contains(err.Error(), "Network") {
		t.Errorf("unknown glob: %v", err)
	}
	if _, err := Build(a, Options{Stacks: []string{"["}}); err == nil || !strings.Contains(err.Error(), "not a valid glob") {
		t.Errorf("bad glob: %v", err)
	}
}

func TestLargeTemplates(t *testing.T) {
	t.Parallel()
	// Modern: the template asset's URL. Legacy: uploaded to the toolkit bucket first, or a clear error.
	p, err := Build(load(t, "aws-cdk-lib@2.276.0/large-template"), Options{})
	if err != nil || p.Stacks[0].Template.URL == "" || p.Stacks[0].Template.Size <= MaxInlineTemplate {
		t.Fatalf("modern: %v %+v", err, p)
	}
	legacy := load(t, "aws-cdk-core@1.204.0/large-template")
	_, err = Build(legacy, Options{})
	if err == nil || !strings.Contains(err.Error(), "51200-byte inline limit") || !strings.Contains(err.Error(), "toolkit") {
		t.Errorf("legacy without a bucket: %v", err)
	}
	p, err = Build(legacy, Options{ToolkitBucket: "staging"})
	if err != nil {
		t.Fatal(err)
	}
	tpl := p.Stacks[0].Template
	if tpl.UploadBucket != "staging" || !strings.HasPrefix(tpl.UploadKey, "cdk/"+p.Stacks[0].StackName+"/") || !strings.HasSuffix(tpl.UploadKey, ".yml") ||
		tpl.URL != "https://s3."+p.Stacks[0].Environment.Region+".amazonaws.com/staging/"+tpl.UploadKey {
		t.Errorf("legacy upload: %+v", tpl)
	}
}

func TestChangeSetNames(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "cdkbot-deploy", "abc123": "cdkbot-abc123", "refs/heads/main": "cdkbot-refsheadsmain",
		strings.Repeat("f", 64): "cdkbot-" + strings.Repeat("f", 40)} {
		if got := changeSetName(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

// A policy-mutated template deploys instead of the synthesized one: beside the synthesized
// template asset, under its own hash; inline when the stack has no template asset and it fits.
func TestMutatedTemplates(t *testing.T) {
	t.Parallel()
	modern := load(t, "aws-cdk-lib@2.276.0/deploy-graph")
	body := []byte(`{"Resources":{"Topic":{"Type":"AWS::SNS::Topic","Properties":{"Tags":[{"Key":"owner","Value":"team"}]}}}}`)
	p, err := Build(modern, Options{Stacks: []string{"Web"}, NoDeps: true, Templates: map[string][]byte{"Web": body}})
	if err != nil {
		t.Fatal(err)
	}
	tpl := p.Stacks[0].Template
	if !tpl.Mutated || string(tpl.Body) != string(body) || tpl.UploadBucket != "cdk-hnb659fds-assets-123456789012-us-east-1" ||
		tpl.UploadKey != fmt.Sprintf("%x.json", sha256.Sum256(body)) ||
		!strings.HasPrefix(tpl.URL, "https://s3.us-east-1.amazonaws.com/cdk-hnb659fds-assets-123456789012-us-east-1/") ||
		!strings.HasSuffix(tpl.URL, tpl.UploadKey) || tpl.Size != int64(len(body)) {
		t.Errorf("modern: %+v", tpl)
	}
	// Untouched stacks keep their synthesized template.
	p, _ = Build(modern, Options{Stacks: []string{"Api"}, NoDeps: true, Templates: map[string][]byte{"Web": body}})
	if p.Stacks[0].Template.Mutated || p.Stacks[0].Template.Body != nil {
		t.Errorf("untouched: %+v", p.Stacks[0].Template)
	}
	legacy := load(t, "aws-cdk-core@1.204.0/deploy-graph")
	p, err = Build(legacy, Options{Stacks: []string{"graph-web"}, NoDeps: true, Templates: map[string][]byte{"graph-web": body}})
	if err != nil || !p.Stacks[0].Template.Inline || !p.Stacks[0].Template.Mutated || p.Stacks[0].Template.UploadBucket != "" {
		t.Errorf("legacy: %+v %v", p.Stacks[0].Template, err)
	}
}

// Stacks the CDK CLI would refuse (unresolved lookups, error annotations) are refused, with
// every reason, and nothing is planned.
func TestIncompleteAssemblyIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../compat-fixtures/aws-cdk-lib@2.276.0/deploy-graph")); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	edited := strings.Replace(string(raw), `"artifacts": {`, `"missing": [{"key": "hosted-zone:account=123456789012:domainName=example.com:region=us-east-1", "provider": "hosted-zone", "props": {"account": "123456789012", "region": "us-east-1", "domainName": "example.com"}}],
  "artifacts": {`, 1)
	if edited == string(raw) {
		t.Fatal("manifest not edited")
	}
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(edited), 0o644)
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(a, Options{Stacks: []string{"Web"}})
	var inc *IncompleteError
	if !errors.As(err, &inc) || len(inc.Reasons) != 1 ||
		!strings.Contains(err.Error(), "nothing deployed: the assembly is incomplete (the CDK CLI refuses it too): context lookup hosted-zone:account=123456789012:domainName=example.com:region=us-east-1 (hosted-zone) is unresolved") {
		t.Errorf("%v", err)
	}
}

// CDK's selection: with none, the top-level stacks (`cdk deploy --all`); Stage stacks only by
// path or "**"; an assembly whose stacks are all in Stages says how to select them.
func TestStageStacksNeedTheirPath(t *testing.T) {
	t.Parallel()
	staged := load(t, "aws-cdk-lib@2.276.0/stage-nested")
	_, err := Build(staged, Options{})
	if err == nil || !strings.Contains(err.Error(), "no top-level stack; its 1 stack(s) are in Stages (Prod/ProdApi2466CF1F): select them by path, e.g. --stacks 'Prod/*', or all with --stacks '**'") {
		t.Errorf("no selection: %v", err)
	}
	for _, sel := range []string{"Prod/*", "**"} {
		if p, err := Build(staged, Options{Stacks: []string{sel}}); err != nil || ids(p) != "Prod/ProdApi2466CF1F" {
			t.Errorf("%s: %v %v", sel, p, err)
		}
	}
	if p, err := Build(load(t, "aws-cdk-lib@2.276.0/deploy-graph"), Options{}); err != nil || len(p.Stacks) != 12 {
		t.Errorf("top-level stacks: %v", err)
	}
}

// A CDK Pipelines app (real, aws-cdk-lib 2.276.0): `cdk deploy --all` semantics deploy the
// pipeline and its support stack, never the Stage stacks behind the pipeline's approval; those
// need their path.
func TestPipelineStagesAreNotDeployedAroundThePipeline(t *testing.T) {
	t.Parallel()
	a := load(t, "aws-cdk-lib@2.276.0/pipeline")
	p, err := Build(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Stacks {
		if strings.HasPrefix(s.ID, "Beta/") || strings.HasPrefix(s.ID, "Prod/") {
			t.Errorf("no selection deployed Stage stack %s", s.ID)
		}
	}
	if !strings.Contains(ids(p), "Pipeline") {
		t.Errorf("the pipeline stack: %s", ids(p))
	}
	p, err = Build(a, Options{Stacks: []string{"Prod/*"}})
	if err != nil || len(p.Stacks) != 2 || !strings.HasPrefix(p.Stacks[0].ID, "Prod/") || !strings.HasPrefix(p.Stacks[1].ID, "Prod/") {
		t.Errorf("Prod/*: %v %v", p, err)
	}
	if p, err := Build(a, Options{Stacks: []string{"**"}}); err != nil || len(p.Stacks) != len(a.AllStacks()) || len(p.Stacks) < 6 {
		t.Errorf("**: %v %v", p, err)
	}
}
