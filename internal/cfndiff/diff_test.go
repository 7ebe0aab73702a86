package cfndiff

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
)

func tpl(t testing.TB, s string) *cfn.Object {
	t.Helper()
	v, err := cfn.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func impacts(d *TemplateDiff) map[string]string {
	out := map[string]string{}
	for _, r := range d.Resources {
		out[r.LogicalID] = r.Impact.String()
	}
	return out
}

func TestPropagationThroughEveryReferenceForm(t *testing.T) {
	t.Parallel()
	forms := map[string]string{
		"Ref":           `{"Ref": "Bucket"}`,
		"GetAtt list":   `{"Fn::GetAtt": ["Bucket", "Arn"]}`,
		"GetAtt dot":    `{"Fn::GetAtt": "Bucket.Arn"}`,
		"Sub":           `{"Fn::Sub": "${Bucket}-x"}`,
		"Sub attr":      `{"Fn::Sub": "${Bucket.Arn}"}`,
		"Sub list":      `{"Fn::Sub": ["${B}", {"B": {"Ref": "Bucket"}}]}`,
		"Join nested":   `{"Fn::Join": ["", ["a", {"Ref": "Bucket"}]]}`,
		"If nested":     `{"Fn::If": ["C", {"Ref": "Bucket"}, "x"]}`,
		"Select deep":   `{"Fn::Select": [0, [{"Fn::Join": ["", [{"Ref": "Bucket"}]]}]]}`,
		"Base64 of Sub": `{"Fn::Base64": {"Fn::Sub": "${Bucket}"}}`,
	}
	for name, ref := range forms {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mk := func(bucket string) *cfn.Object {
				return tpl(t, fmt.Sprintf(`{"Resources": {
				  "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": %q}},
				  "Param": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": "v", "Name": %s}},
				  "Down": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Name": {"Ref": "Param"}, "Value": "x"}},
				  "Mutable": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": %s}}}}`, bucket, ref, ref))
			}
			d := Diff(mk("a"), mk("b"), Options{})
			got := impacts(d)
			want := map[string]string{"Bucket": "replace", "Param": "replace", "Down": "replace", "Mutable": "update"}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %s, want %s (all: %v)", k, got[k], v, got)
				}
			}
			p := findResource(d, "Mutable").Property("Value")
			if p == nil || p.Changed || len(p.ReplacedReferences) != 1 || p.ReplacedReferences[0] != "Bucket" {
				t.Errorf("Mutable.Value should say it resolves anew because Bucket is replaced: %+v", p)
			}
		})
	}
}

func findResource(d *TemplateDiff, id string) *ResourceChange {
	for _, r := range d.Resources {
		if r.LogicalID == id {
			return r
		}
	}
	return nil
}

func TestEqualityIsExactWhereCloudFormationIs(t *testing.T) {
	t.Parallel()
	same := [][2]string{{`"5"`, `5`}, {`5`, `5.0`}, {`"true"`, `true`}, {`"false"`, `false`}, {`"1.50"`, `1.5`},
		{`[{"Key":"a","Value":"1"},{"Key":"b","Value":"2"}]`, `[{"Key":"b","Value":"2"},{"Key":"a","Value":"1"}]`}}
	different := [][2]string{{`""`, `0`}, {`[]`, `""`}, {`"0x10"`, `16`}, {`" 5 "`, `5`}, {`"True"`, `true`}, {`null`, `"null"`}, {`["a","b"]`, `["b","a"]`}}
	for _, c := range same {
		a, _ := cfn.ParseJSON([]byte(c[0]))
		b, _ := cfn.ParseJSON([]byte(c[1]))
		if !equal(a, b, "Tags", false) {
			t.Errorf("%s should equal %s", c[0], c[1])
		}
	}
	for _, c := range different {
		a, _ := cfn.ParseJSON([]byte(c[0]))
		b, _ := cfn.ParseJSON([]byte(c[1]))
		if equal(a, b, "Value", false) {
			t.Errorf("%s should differ from %s", c[0], c[1])
		}
	}
	// Inside a policy document every list is a set, but an intrinsic's arguments keep their order.
	p1 := tpl(t, `{"Statement": [{"Action": ["a", "b"], "Resource": {"Fn::Join": ["", ["x", "y"]]}}]}`)
	p2 := tpl(t, `{"Statement": [{"Action": ["b", "a"], "Resource": {"Fn::Join": ["", ["x", "y"]]}}]}`)
	p3 := tpl(t, `{"Statement": [{"Action": ["b", "a"], "Resource": {"Fn::Join": ["", ["y", "x"]]}}]}`)
	if !Equal(p1, p2) || Equal(p1, p3) {
		t.Error("policy sets / intrinsic order")
	}
}

func TestPoliciesDecideWhatHappensToData(t *testing.T) {
	t.Parallel()
	old := tpl(t, `{"Resources": {
	  "Kept": {"Type": "AWS::S3::Bucket", "DeletionPolicy": "RetainExceptOnCreate"},
	  "Snap": {"Type": "AWS::EC2::Volume", "DeletionPolicy": "Snapshot", "Properties": {"Size": 1, "AvailabilityZone": "a"}},
	  "Gone": {"Type": "AWS::SQS::Queue"},
	  "Table": {"Type": "AWS::DynamoDB::Table", "UpdateReplacePolicy": "Retain", "Properties": {"TableName": "a"}},
	  "Custom": {"Type": "Custom::X", "Properties": {"A": 1}},
	  "Meta": {"Type": "AWS::SQS::Queue", "Metadata": {"aws:cdk:path": "a"}}}}`)
	new := tpl(t, `{"Resources": {
	  "Table": {"Type": "AWS::DynamoDB::Table", "UpdateReplacePolicy": "Retain", "Properties": {"TableName": "b"}},
	  "Custom": {"Type": "Custom::X", "Properties": {"A": 2}},
	  "Meta": {"Type": "AWS::SQS::Queue", "Metadata": {"aws:cdk:path": "b"}}}}`)
	d := Diff(old, new, Options{})
	checks := map[string][2]string{
		"Kept":  {"orphan", "kept in AWS"},
		"Snap":  {"destroy", "snapshot"},
		"Gone":  {"destroy", "data are deleted"},
		"Table": {"replace", "old resource is kept"},
	}
	for id, want := range checks {
		r := findResource(d, id)
		if r == nil || r.Impact.String() != want[0] || !strings.Contains(r.Consequence(), want[1]) {
			t.Errorf("%s: %v %q, want %s %q", id, r.Impact, r.Consequence(), want[0], want[1])
		}
	}
	if c := findResource(d, "Custom"); c.Impact != Update || !c.UnknownType || !c.Properties[0].Unknown {
		t.Errorf("custom resource: %+v", c)
	}
	if m := findResource(d, "Meta"); !m.MetadataOnly() {
		t.Error("metadata-only change not recognised")
	}
}

func TestYAMLAndJSONTemplatesCompareEqual(t *testing.T) {
	t.Parallel()
	j := tpl(t, `{"Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": {"Fn::Sub": "${AWS::Region}-x"}, "Value": {"Fn::GetAtt": ["B", "Arn"]}}}}}`)
	y := tpl(t, "Resources:\n  P:\n    Type: AWS::SSM::Parameter\n    Properties:\n      Name: !Sub ${AWS::Region}-x\n      Value: !GetAtt B.Arn\n")
	if d := Diff(j, y, Options{}); !d.IsEmpty() {
		t.Errorf("JSON and YAML forms differ: %v", impacts(d))
	}
}

func TestNestedStacksInAssemblies(t *testing.T) {
	t.Parallel()
	oldA, err := assembly.Load(os.DirFS("../../compat-fixtures/aws-cdk-core@1.204.0/stage-nested"), "old")
	if err != nil {
		t.Fatal(err)
	}
	newA, err := assembly.Load(os.DirFS("../../compat-fixtures/aws-cdk-lib@2.276.0/stage-nested"), "new")
	if err != nil {
		t.Fatal(err)
	}
	stacks, err := DiffAssemblies(oldA, newA, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stacks) != 1 || stacks[0].ID != "Prod/ProdApi2466CF1F" || len(stacks[0].Nested) != 1 {
		t.Fatalf("want the Stage's stack with its nested stack: %+v", stacks)
	}
	if n := stacks[0].Nested[0]; n.Status != StackUnchanged || n.Diff == nil {
		t.Errorf("nested stack: %+v", n)
	}
}

// FuzzDiff: no input panics; a template never differs from itself; what diff(a, b) creates,
// diff(b, a) destroys or orphans.
func FuzzDiff(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/reference/cdkbot/shortfall-*/old.json")
	for _, p := range seeds[:min(8, len(seeds))] {
		a, _ := os.ReadFile(p)
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "new.json"))
		f.Add(string(a), string(b))
	}
	f.Add(`{"Resources": {"A": {"Type": "AWS::S3::Bucket"}}}`, `{"Resources": {"B": {"Type": "X", "DependsOn": "A"}}}`)
	f.Fuzz(func(t *testing.T, as, bs string) {
		a, errA := cfn.Parse([]byte(as))
		b, errB := cfn.Parse([]byte(bs))
		if errA != nil || errB != nil {
			return
		}
		if d := Diff(a, a, Options{}); !d.IsEmpty() {
			t.Fatalf("diff(a, a) not empty: %v", impacts(d))
		}
		ab, ba := Diff(a, b, Options{}), Diff(b, a, Options{})
		if got, want := ids(ab, Create), ids(ba, Destroy, Orphan); got != want {
			t.Fatalf("creations %s != destructions %s", got, want)
		}
	})
}

func ids(d *TemplateDiff, kinds ...Impact) string {
	var out []string
	for _, r := range d.Resources {
		for _, k := range kinds {
			if r.Impact == k {
				out = append(out, r.LogicalID)
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestApplyVerdict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		impact   Impact
		verdict  string
		want     Impact
		disagree bool
	}{
		{Replace, "True", Replace, false}, {Update, "True", Replace, true}, {Replace, "False", Update, true},
		{Update, "Conditional", MayReplace, true}, {Create, "True", Create, false}, {Update, "Maybe", Update, false},
	} {
		r := &ResourceChange{Impact: tc.impact}
		if got := r.ApplyVerdict(tc.verdict); got != tc.disagree || r.Impact != tc.want {
			t.Errorf("%s + %s: %s (disagree %v)", tc.impact, tc.verdict, r.Impact, got)
		}
	}
	r := &ResourceChange{Impact: Update}
	r.ApplyVerdict("True")
	if n := r.VerdictNote(); n != "CloudFormation's change set says replace; the resource specification said update" {
		t.Errorf("note: %s", n)
	}
}
