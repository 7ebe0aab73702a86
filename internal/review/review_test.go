package review

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/stackstate"
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
	t.Parallel()
	base, head := load(t, assemblies+"before"), load(t, assemblies+"after")
	r, err := Run(Input{Base: base, Head: head, ToolSchemaMax: 55, FailOn: []string{GateDestroyStateful, GateSecurityBroadening}, SecurityMinimum: "low"})
	if err != nil {
		t.Fatal(err)
	}
	ds := gate(r, GateDestroyStateful)
	if !ds.Failing() || len(ds.Items) != 2 || !strings.Contains(ds.Items[1], "OrdersA9B65338 (AWS::DynamoDB::Table) in ShopData") {
		t.Errorf("destroy-stateful: %+v", ds)
	}
	if g := gate(r, GateSecurityBroadening); !g.Failing() || len(g.Items) != 3 ||
		g.Items[0] != "ShopNetwork: opens port 443 to the internet (ServiceSg2632F788) (medium)" ||
		!strings.HasPrefix(g.Items[1], "ShopService: grants dynamodb:BatchWriteItem, dynamodb:DeleteItem") || !strings.HasSuffix(g.Items[1], "(low)") {
		t.Errorf("security-broadening at low: %+v", g)
	}
	// By severity: the default (high) lets the web port and the scoped grants through; medium
	// catches the open web port alone.
	for minimum, want := range map[string]int{"": 0, "high": 0, "medium": 1, "critical": 0} {
		r, _ := Run(Input{Base: base, Head: head, ToolSchemaMax: 55, SecurityMinimum: minimum})
		if g := gate(r, GateSecurityBroadening); len(g.Items) != want || g.Triggered != (want > 0) || !g.Enforced {
			t.Errorf("minimum %q: %+v", minimum, g)
		}
	}
	if _, err := Run(Input{Base: base, Head: head, ToolSchemaMax: 55, SecurityMinimum: "severe"}); err == nil {
		t.Error("an unknown severity must be refused")
	}
	if g := gate(r, GateReplace); !g.Triggered || g.Enforced || g.Failing() {
		t.Errorf("replace is reported but not enforced: %+v", g)
	}
	if !r.Failed() || len(r.TemplateHash) != 3 {
		t.Errorf("failed %v, hashes %v", r.Failed(), r.TemplateHash)
	}
	r, _ = Run(Input{Base: base, Head: head, ToolSchemaMax: 55, FailOn: []string{GateDestroyStateful, GateExportInUse},
		Approvals: []Approval{{By: "bob", Via: "label " + DefaultOverrideLabel}}})
	// The table's new ARN changes an export ShopService imports: CloudFormation refuses that,
	// so no approval lifts it.
	if g := gate(r, GateExportInUse); !g.Failing() || g.Overridden || len(g.Items) != 2 ||
		!strings.Contains(g.Items[0], "ShopData: export ShopData:ExportsOutputFnGetAttOrdersA9B65338Arn17F87B9C (OrdersA9B65338 is replaced) is imported by ShopService") {
		t.Errorf("export-in-use: %+v", g)
	}
	r, _ = Run(Input{Base: base, Head: head, ToolSchemaMax: 55, FailOn: []string{GateDestroyStateful},
		Approvals: []Approval{{By: "bob", Via: "label " + DefaultOverrideLabel}}})
	if g := gate(r, GateDestroyStateful); !g.Overridden || g.Failing() || r.Failed() || r.Approvals[0].By != "bob" {
		t.Errorf("approval: %+v", g)
	}
}

func TestFirstDeploymentAndUnchanged(t *testing.T) {
	t.Parallel()
	head := load(t, assemblies+"after")
	r, err := Run(Input{Head: head, ToolSchemaMax: 55, FailOn: AllGates, SecurityMinimum: "low"})
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

// An assembly the CDK CLI would refuse to deploy (unresolved lookups, error annotations) fails
// the incomplete gate, on by default, and no approval overrides it.
func TestIncompleteAssembly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(assemblies+"after")); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(dir + "/manifest.json")
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["missing"] = []any{map[string]any{"key": "vpc-provider:account=123456789012:filter.tag:Name=main:region=eu-west-1", "provider": "vpc-provider",
		"props": map[string]any{"account": "123456789012", "region": "eu-west-1"}}}
	arts := m["artifacts"].(map[string]any)
	svc := arts["ShopService"].(map[string]any)
	md, _ := svc["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		svc["metadata"] = md
	}
	md["/ShopService/Checkout"] = []any{map[string]any{"type": "aws:cdk:error", "data": "reservedConcurrentExecutions must be at least 1"}}
	raw, _ = json.Marshal(m)
	os.WriteFile(dir+"/manifest.json", raw, 0o644)
	head := load(t, dir)
	r, err := Run(Input{Base: load(t, assemblies+"before"), Head: head, ToolSchemaMax: 55, Approvals: []Approval{{By: "bob", Via: "label x"}}})
	if err != nil {
		t.Fatal(err)
	}
	g := gate(r, GateIncomplete)
	if !g.Failing() || g.Overridden || len(g.Items) != 2 || !r.Failed() ||
		!strings.Contains(strings.Join(g.Items, "\n"), "context lookup vpc-provider:account=123456789012:filter.tag:Name=main:region=eu-west-1 (vpc-provider) is unresolved") ||
		!strings.Contains(strings.Join(g.Items, "\n"), "ShopService: error at /ShopService/Checkout: reservedConcurrentExecutions must be at least 1") {
		t.Errorf("incomplete: %+v", g)
	}
	if gate(r, GateDestroyStateful).Failing() {
		t.Error("the approval still approves the other gates")
	}
}

// Violations the base already had are shown as such and do not fail the policy-error gate;
// the headline counts only the change's own policy errors.
func TestViolationsAlreadyOnTheBase(t *testing.T) {
	t.Parallel()
	base, head := load(t, assemblies+"before"), load(t, assemblies+"after")
	cfg, _, err := aspects.Load(".cdkbot.yml", []byte("aspects:\n  - use: require-tags\n    with: { keys: [cost-center] }\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(Input{Base: base, Head: head, ToolSchemaMax: 55, Policy: cfg, FailOn: []string{GatePolicyError}})
	if err != nil {
		t.Fatal(err)
	}
	existing, fresh := 0, 0
	for _, v := range r.Policy.Violations {
		if v.Existing {
			existing++
		} else if !v.Suppressed && v.Severity == "error" {
			fresh++
		}
	}
	if existing == 0 || gate(r, GatePolicyError).Triggered != (fresh > 0) || len(gate(r, GatePolicyError).Items) != fresh {
		t.Errorf("%d existing, %d new; gate %+v", existing, fresh, gate(r, GatePolicyError))
	}
	// Against no base every violation is the change's.
	r, _ = Run(Input{Head: head, ToolSchemaMax: 55, Policy: cfg, FailOn: []string{GatePolicyError}})
	if g := gate(r, GatePolicyError); !g.Failing() || len(g.Items) != existing+fresh {
		t.Errorf("first deployment: %+v", g)
	}
}

// A review keeps of each stack what it shows, not the templates: those stay parsed only for a
// stack compared with what runs. Guards the memory of reviews of large assemblies.
func TestReviewLetsTheTemplatesGo(t *testing.T) {
	t.Parallel()
	const fixture = "../../compat-fixtures/aws-cdk-lib@2.276.0/deploy-graph"
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(dir, "Web.template.json")
	raw, err := os.ReadFile(web)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(raw), `"Name": "/graph/web"`, `"Name": "/graph/web2"`, 1)
	if err := os.WriteFile(web, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	base, head := load(t, fixture), load(t, dir)
	first := head.AllStacks()[0].QualifiedID()
	rep, err := Run(Input{Base: base, Head: head, Deployed: map[string]*stackstate.Stack{first: {Deployed: false}}})
	if err != nil {
		t.Fatal(err)
	}
	updated := 0
	for _, sd := range rep.Stacks {
		if kept := sd.OldTemplate() != nil; kept != (sd.ID == first) {
			t.Errorf("%s: old template kept %v", sd.ID, kept)
		}
		if sd.ID == first {
			continue
		}
		for _, r := range sd.Diff.Resources {
			if !r.Added() && !r.Removed() {
				updated++
				if _, ok := r.New.Get("Properties"); ok {
					t.Errorf("%s %s: the new body is kept whole", sd.ID, r.LogicalID)
				}
			}
		}
	}
	if updated == 0 {
		t.Fatal("no updated resource to look at")
	}
}
