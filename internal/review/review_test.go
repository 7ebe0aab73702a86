package review

import (
	"os"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

func load(t *testing.T, dir string) *assembly.Assembly {
	t.Helper()
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const assemblies = "../cli/demo/"

func gate(r *Report, name string) Gate {
	for _, g := range r.Gates {
		if g.Name == name {
			return g
		}
	}
	return Gate{}
}

func TestGates(t *testing.T) {
	base, head := load(t, assemblies+"before"), load(t, assemblies+"after")
	r, err := Run(Input{Base: base, Head: head, ToolSchemaMax: 55, FailOn: []string{GateDestroyStateful, GateSecurityBroadening}})
	if err != nil {
		t.Fatal(err)
	}
	ds := gate(r, GateDestroyStateful)
	if !ds.Failing() || len(ds.Items) != 2 || !strings.Contains(ds.Items[1], "OrdersA9B65338 (AWS::DynamoDB::Table) in ShopData") {
		t.Errorf("destroy-stateful: %+v", ds)
	}
	if g := gate(r, GateSecurityBroadening); !g.Failing() || len(g.Items) != 2 {
		t.Errorf("security-broadening: %+v", g)
	}
	if g := gate(r, GateReplace); !g.Triggered || g.Enforced || g.Failing() {
		t.Errorf("replace is reported but not enforced: %+v", g)
	}
	if !r.Failed() || len(r.TemplateHash) != 3 {
		t.Errorf("failed %v, hashes %v", r.Failed(), r.TemplateHash)
	}
	r, _ = Run(Input{Base: base, Head: head, ToolSchemaMax: 55, Approvals: []Approval{{By: "bob", Via: "label " + DefaultOverrideLabel}}})
	if g := gate(r, GateDestroyStateful); !g.Overridden || g.Failing() || r.Failed() || r.Approvals[0].By != "bob" {
		t.Errorf("approval: %+v", g)
	}
}

func TestFirstDeploymentAndUnchanged(t *testing.T) {
	head := load(t, assemblies+"after")
	r, err := Run(Input{Head: head, ToolSchemaMax: 55, FailOn: AllGates})
	if err != nil {
		t.Fatal(err)
	}
	// Creating everything destroys nothing; it does grant permissions, from none.
	for _, g := range r.Gates {
		if g.Triggered != (g.Name == GateSecurityBroadening) {
			t.Errorf("first deployment: %+v", g)
		}
	}
	r, _ = Run(Input{Base: head, Head: head, ToolSchemaMax: 55, FailOn: AllGates})
	for _, g := range r.Gates {
		if g.Triggered {
			t.Errorf("no change triggers %+v", g)
		}
	}
	if err := ValidateGates([]string{"replace", "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Error(err)
	}
}
