package cfndiff

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

// edited loads a copy of a real fixture with one file's text replaced.
func edited(t *testing.T, fixture, file, old, new string) *assembly.Assembly {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("../../compat-fixtures", fixture))); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil || !strings.Contains(string(raw), old) {
		t.Fatalf("%s lacks %q: %v", file, old, err)
	}
	os.WriteFile(filepath.Join(dir, file), []byte(strings.Replace(string(raw), old, new, -1)), 0o644)
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func stackByID(stacks []*StackDiff, id string) *StackDiff {
	for _, top := range stacks {
		for _, s := range top.All() {
			if s.ID == id {
				return s
			}
		}
	}
	return nil
}

// Replacement crosses stack boundaries through exports: Data's topic, renamed, is replaced; its
// exported ARN changes; Svc1 and Svc2, which import it, change too (their parameters resolve
// anew), and since they import it as deployed, CloudFormation would refuse: export in use.
// On real assemblies from a modern and a legacy framework version, with the templates kept and
// released stack by stack (what cdkbot diff does): the pass across stacks sees the same.
func TestBlastRadiusThroughExports(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fixture, data, svc1, svc2, web string
		release                        bool
	}{
		{"aws-cdk-lib@2.276.0/deploy-graph", "Data", "Svc1", "Svc2", "Web", false},
		{"aws-cdk-core@1.204.0/deploy-graph", "graph-data", "graph-svc1", "graph-svc2", "graph-web", false},
		{"aws-cdk-lib@2.276.0/deploy-graph", "Data", "Svc1", "Svc2", "Web", true},
		{"aws-cdk-core@1.204.0/deploy-graph", "graph-data", "graph-svc1", "graph-svc2", "graph-web", true},
	} {
		t.Run(fmt.Sprintf("%s/release=%v", c.fixture, c.release), func(t *testing.T) {
			t.Parallel()
			base, err := assembly.Load(os.DirFS(filepath.Join("../../compat-fixtures", c.fixture)), c.fixture)
			if err != nil {
				t.Fatal(err)
			}
			head := edited(t, c.fixture, c.data+".template.json", `"TopicName": "graph-data"`, `"TopicName": "graph-data-v2"`)
			stacks, err := DiffAssemblies(base, head, nil, Options{ReleaseTemplates: c.release})
			if err != nil {
				t.Fatal(err)
			}
			data := stackByID(stacks, c.data)
			if released := data.OldTemplate() == nil; released != c.release {
				t.Errorf("old template released: %v", released)
			}
			if len(data.ExportsInUse) != 1 || strings.Join(data.ExportsInUse[0].Importers, ",") != c.svc1+","+c.svc2 ||
				data.ExportsInUse[0].Why != "Topic is replaced" {
				t.Fatalf("exports in use: %+v", data.ExportsInUse)
			}
			for _, id := range []string{c.svc1, c.svc2} {
				s := stackByID(stacks, id)
				if len(s.Diff.Resources) != 1 || s.Diff.Resources[0].LogicalID != "Upstream" || s.Diff.Resources[0].Impact != Update {
					t.Fatalf("%s: %+v", id, s.Diff.Resources)
				}
				p := s.Diff.Resources[0].Property("Value")
				if p == nil || p.Changed || len(p.ChangedInputs) != 1 || !strings.Contains(p.ChangedInputs[0].Why, c.data+": Topic is replaced") {
					t.Errorf("%s Value: %+v", id, p)
				}
			}
			// Stacks that import nothing from Data are untouched.
			if s := stackByID(stacks, c.web); s == nil || s.Changed() {
				t.Errorf("Web changed: %+v", s.Diff.Resources)
			}
		})
	}
}

// Replacement crosses the nested-stack boundary: the nested stack's table is replaced, so the
// output the parent reads changes, and the parent's parameter resolves anew.
func TestBlastRadiusThroughNestedOutputs(t *testing.T) {
	t.Parallel()
	fixture := "aws-cdk-lib@2.276.0/stage-nested"
	base, err := assembly.Load(os.DirFS(filepath.Join("../../compat-fixtures", fixture)), fixture)
	if err != nil {
		t.Fatal(err)
	}
	head := edited(t, fixture, "assembly-Prod/ProdApiStorageDD1EDF8B.nested.template.json", `"AttributeName": "pk"`, `"AttributeName": "id"`)
	stacks, err := DiffAssemblies(base, head, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	parent := stackByID(stacks, "Prod/ProdApi2466CF1F")
	if parent == nil || len(parent.Nested) != 1 || parent.Nested[0].Diff.Resources[0].Impact != Replace {
		t.Fatalf("nested: %+v", parent)
	}
	var param *ResourceChange
	for _, r := range parent.Diff.Resources {
		if r.Type() == "AWS::SSM::Parameter" {
			param = r
		}
	}
	if param == nil || param.Impact != Update || len(param.Property("Value").ChangedInputs) != 1 ||
		!strings.Contains(param.Property("Value").ChangedInputs[0].Name, ".Outputs.ProdApiStorageTable75DC7EEERef") ||
		!strings.Contains(param.Property("Value").ChangedInputs[0].Why, "is replaced") {
		t.Fatalf("the parent's parameter reading the nested output: %+v", param)
	}
}

// The case on real assemblies: the VPC inside a CDK nested stack is replaced, so the
// parent's security group (its VpcId comes from the nested stack's output) is replaced too, and
// the parameter holding the id updates.
func TestNestedVpcReplacementReachesTheParent(t *testing.T) {
	t.Parallel()
	for _, fixture := range []string{"aws-cdk-lib@2.276.0/nested-vpc", "aws-cdk-core@1.204.0/nested-vpc"} {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			nested, _ := filepath.Glob(filepath.Join("../../compat-fixtures", fixture, "*.nested.template.json"))
			if len(nested) != 1 {
				t.Fatalf("nested template: %v", nested)
			}
			base, err := assembly.Load(os.DirFS(filepath.Join("../../compat-fixtures", fixture)), fixture)
			if err != nil {
				t.Fatal(err)
			}
			head := edited(t, fixture, filepath.Base(nested[0]), `"CidrBlock": "10.0.0.0/16"`, `"CidrBlock": "10.1.0.0/16"`)
			stacks, err := DiffAssemblies(base, head, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(stacks) != 1 || len(stacks[0].Nested) != 1 || stacks[0].Nested[0].Diff.Resources[0].Impact != Replace {
				t.Fatalf("nested VPC: %+v", stacks)
			}
			impacts := map[string]Impact{}
			for _, r := range stacks[0].Diff.Resources {
				impacts[r.Type()] = r.Impact
			}
			if impacts["AWS::EC2::SecurityGroup"] != Replace || impacts["AWS::SSM::Parameter"] != Update {
				t.Errorf("parent: %v", impacts)
			}
		})
	}
}

// And the other way: the parent's alarm topic, replaced, reaches the nested stack through the
// parameter CDK made for it, so the nested parameter that stores it updates.
func TestParentReplacementReachesTheNestedStack(t *testing.T) {
	t.Parallel()
	for _, fixture := range []string{"aws-cdk-lib@2.276.0/nested-vpc", "aws-cdk-core@1.204.0/nested-vpc"} {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			base, err := assembly.Load(os.DirFS(filepath.Join("../../compat-fixtures", fixture)), fixture)
			if err != nil {
				t.Fatal(err)
			}
			head := edited(t, fixture, "Service.template.json", `"TopicName": "service-alarms"`, `"TopicName": "service-alarms-v2"`)
			stacks, err := DiffAssemblies(base, head, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(stacks) != 1 || len(stacks[0].Nested) != 1 {
				t.Fatalf("stacks: %+v", stacks)
			}
			nested := stacks[0].Nested[0]
			var param *ResourceChange
			for _, r := range nested.Diff.Resources {
				if r.LogicalID == "AlarmTopicParam" {
					param = r
				}
			}
			if param == nil || param.Impact != Update || len(param.Property("Value").ChangedInputs) != 1 ||
				!strings.HasPrefix(param.Property("Value").ChangedInputs[0].Name, "parameter ") ||
				!strings.Contains(param.Property("Value").ChangedInputs[0].Why, "Alarms is replaced") {
				t.Fatalf("the nested parameter: %+v", nested.Diff.Resources)
			}
			for _, r := range nested.Diff.Resources {
				if r.LogicalID == "Vpc" {
					t.Errorf("the VPC does not read the topic: %+v", r)
				}
			}
		})
	}
}
