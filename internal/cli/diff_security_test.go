package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDiffSecurityGroupRuleMoved is issue 26's moved rule: SSH from the world leaves the bastion's
// group for the database's. The rule is identified with its group, as @aws-cdk/cloudformation-diff
// does (testdata/reference/cdkbot/case-security-group-rule-moved-*), so the move is a removal plus
// an addition and broadens; the same rule rewritten as a standalone ingress of the same group,
// named through Ref, changes nothing.
func TestDiffSecurityGroupRuleMoved(t *testing.T) {
	dir := t.TempDir()
	const ssh = `{"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22, "CidrIp": "0.0.0.0/0"}`
	group := func(ingress string) string {
		return `{"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "d", "VpcId": "vpc-1",
			"SecurityGroupIngress": [` + ingress + `]}}`
	}
	before := writeFile(t, dir, "before.json",
		`{"Resources": {"Bastion": `+group(ssh)+`, "Database": `+group("")+`}}`)
	moved := writeFile(t, dir, "moved.json",
		`{"Resources": {"Bastion": `+group("")+`, "Database": `+group(ssh)+`}}`)
	standalone := writeFile(t, dir, "standalone.json", `{"Resources": {"Bastion": `+group("")+`, "Database": `+
		group("")+`, "Ssh": {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {"GroupId": {"Ref": "Bastion"},
		"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22, "CidrIp": "0.0.0.0/0"}}}}`)

	runCases(t, []cliCase{
		{"move, text", []string{"diff", before, moved, "--fail"}, ExitVerdict,
			[]string{"ingress ${Database.GroupId}", "ingress ${Bastion.GroupId}", "0.0.0.0/0"}, nil},
		{"same group through Ref", []string{"diff", before, standalone, "--fail"}, ExitVerdict, nil, nil},
	})

	security := func(newer string) (broadening bool, added, removed []string) {
		t.Helper()
		_, out, _ := run(t, "diff", before, newer, "--format", "json")
		var r struct {
			Stacks []struct {
				Security struct {
					Broadening bool `json:"broadening"`
					Added      []struct {
						GroupID string `json:"groupId"`
					} `json:"securityGroupRulesAdded"`
					Removed []struct {
						GroupID string `json:"groupId"`
					} `json:"securityGroupRulesRemoved"`
				} `json:"security"`
			} `json:"stacks"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Stacks) != 1 {
			t.Fatalf("diff json: %v\n%s", err, out)
		}
		s := r.Stacks[0].Security
		for _, x := range s.Added {
			added = append(added, x.GroupID)
		}
		for _, x := range s.Removed {
			removed = append(removed, x.GroupID)
		}
		return s.Broadening, added, removed
	}
	if b, added, removed := security(moved); !b || strings.Join(added, ",") != "${Database.GroupId}" ||
		strings.Join(removed, ",") != "${Bastion.GroupId}" {
		t.Errorf("moved rule: broadening %v, added %v, removed %v; want true, the database's, the bastion's",
			b, added, removed)
	}
	if b, added, removed := security(standalone); b || len(added)+len(removed) != 0 {
		t.Errorf("same group through Ref: broadening %v, added %v, removed %v; want no security change",
			b, added, removed)
	}
}
