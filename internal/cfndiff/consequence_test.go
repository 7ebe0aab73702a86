package cfndiff

import (
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// TestDestroyConsequenceSaysWhetherDataIsLost checks that destroying a type the specification
// marks stateless deletes the resource without "its data", while stateful and unknown types
// (which may hold data) still say their data goes.
func TestDestroyConsequenceSaysWhetherDataIsLost(t *testing.T) {
	t.Parallel()
	cases := []struct{ typ, policy, want string }{
		{"AWS::SNS::Topic", "", "the resource is deleted"},
		{"AWS::IAM::Role", "", "the resource is deleted"},
		{"AWS::DynamoDB::Table", "", "the resource and its data are deleted"},
		{"Custom::Seeder", "", "the resource and its data are deleted"},
		{"AWS::RDS::DBInstance", "Snapshot", "a snapshot is taken, then the resource is deleted (DeletionPolicy: Snapshot)"},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			t.Parallel()
			policy := ""
			if tc.policy != "" {
				policy = `, "DeletionPolicy": "` + tc.policy + `"`
			}
			old, err := cfn.Parse([]byte(`{"Resources": {"R": {"Type": "` + tc.typ + `"` + policy + `}}}`))
			if err != nil {
				t.Fatal(err)
			}
			d := Diff(old, cfn.NewObject(), Options{})
			if len(d.Resources) != 1 || d.Resources[0].Impact != Destroy {
				t.Fatalf("want one destroy, got %+v", d.Resources)
			}
			if got := d.Resources[0].Consequence(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
