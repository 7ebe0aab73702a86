package review

import (
	"os"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/stackstate"
)

// What a nested stack runs is compared with the base's nested template too: a nested VPC
// changed outside the parent shows under the parent, which itself runs the base.
func TestDeployedNestedStacks(t *testing.T) {
	t.Parallel()
	dir := "../../compat-fixtures/aws-cdk-lib@2.276.0/nested-vpc"
	a := load(t, dir)
	parse := func(name string, edit func(string) string) *cfn.Object {
		t.Helper()
		raw, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		o, err := cfn.Parse([]byte(edit(string(raw))))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	same := func(s string) string { return s }
	parent := parse("Service.template.json", same)
	const nestedID = "NetworkNestedStackNetworkNestedStackResource0124E108"
	for _, tc := range []struct {
		name   string
		nested map[string]*cfn.Object
		state  string
	}{
		{"as the base", map[string]*cfn.Object{nestedID: parse("ServiceNetwork7F1FBC97.nested.template.json", same)}, DeployedSame},
		{"nested edited", map[string]*cfn.Object{nestedID: parse("ServiceNetwork7F1FBC97.nested.template.json", func(s string) string {
			return strings.Replace(s, `"EnableDnsSupport": true`, `"EnableDnsSupport": false`, 1)
		})}, DeployedDiffers},
		{"nested missing", map[string]*cfn.Object{}, DeployedDiffers},
	} {
		rep, err := Run(Input{Base: a, Head: a, Deployed: map[string]*stackstate.Stack{"Service": {Deployed: true, Template: parent, Nested: tc.nested}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Deployed) != 1 || rep.Deployed[0].State != tc.state {
			t.Fatalf("%s: %+v", tc.name, rep.Deployed)
		}
		if tc.state == DeployedDiffers {
			d := rep.Deployed[0].Diff
			if !d.Diff.IsEmpty() || len(d.Nested) != 1 || d.Nested[0].ID != "Service/"+nestedID {
				t.Errorf("%s: the difference belongs to the nested stack: %+v", tc.name, d.Nested)
			}
		}
	}
}
