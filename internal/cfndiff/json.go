package cfndiff

import (
	"encoding/json"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// The security types marshal to the shapes @aws-cdk/cloudformation-diff uses for the same
// facts (StatementJson, RuleJson, ManagedPolicyJson), so tools reading either agree.

// MarshalJSON writes {"sid"?, "effect", "resources", "principals", "actions", "condition"?},
// or {"unparseable": text} for a statement that is an intrinsic.
func (s Statement) MarshalJSON() ([]byte, error) {
	if s.Unparseable != "" {
		return json.Marshal(map[string]string{"unparseable": s.Unparseable})
	}
	m := map[string]any{"effect": s.Effect, "resources": s.Resources, "principals": s.Principals, "actions": s.Actions}
	if s.HasSid {
		m["sid"] = s.Sid
	}
	if s.HasCondition {
		m["condition"] = rawValue{s.Condition}
	}
	return json.Marshal(m)
}

// MarshalJSON writes {"not", "values"}.
func (t Targets) MarshalJSON() ([]byte, error) {
	values := t.Values
	if values == nil {
		values = []string{}
	}
	return json.Marshal(struct {
		Not    bool     `json:"not"`
		Values []string `json:"values"`
	}{t.Not, values})
}

// MarshalJSON writes {"identityArn", "managedPolicyArn"}.
func (m ManagedPolicyAttachment) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"identityArn": m.IdentityARN, "managedPolicyArn": m.ManagedPolicyARN})
}

// MarshalJSON writes {"direction", "groupId", "ipProtocol", "fromPort"?, "toPort"?, "peer"?}.
func (r SecurityGroupRule) MarshalJSON() ([]byte, error) {
	m := map[string]any{"direction": r.Direction, "groupId": r.GroupID, "ipProtocol": r.IPProtocol}
	if r.FromPort != nil {
		m["fromPort"] = rawValue{r.FromPort}
	}
	if r.ToPort != nil {
		m["toPort"] = rawValue{r.ToPort}
	}
	if r.Peer != nil {
		key := map[string]string{
			"cidr-ip": "ip", "security-group": "securityGroupId", "prefix-list": "prefixListId",
		}[r.Peer.Kind]
		m["peer"] = map[string]string{"kind": r.Peer.Kind, key: r.Peer.Value}
	}
	return json.Marshal(m)
}

// rawValue marshals a template value as the template wrote it.
type rawValue struct{ v any }

func (r rawValue) MarshalJSON() ([]byte, error) { return []byte(cfn.JSON(r.v)), nil }
