package cfndiff

import "testing"

func TestSeverityOfPermissionChanges(t *testing.T) {
	t.Parallel()
	world := &RulePeer{Kind: "cidr-ip", Value: "0.0.0.0/0"}
	for _, c := range []struct {
		name string
		sec  Security
		want string
		sev  Severity
	}{
		{"ssh to the world", Security{RulesAdded: []SecurityGroupRule{{Direction: "ingress", GroupID: "Sg", IPProtocol: "tcp", FromPort: "22", ToPort: "22", Peer: world}}},
			"opens port 22 to the internet (Sg)", Critical},
		{"everything to the world (IPv6)", Security{RulesAdded: []SecurityGroupRule{{Direction: "ingress", GroupID: "Sg", IPProtocol: "-1", Peer: &RulePeer{Kind: "cidr-ip", Value: "::/0"}}}},
			"opens all ports to the internet (Sg)", Critical},
		{"https to the world", Security{RulesAdded: []SecurityGroupRule{{Direction: "ingress", GroupID: "Sg", IPProtocol: "tcp", FromPort: 443.0, ToPort: 443.0, Peer: world}}},
			"opens port 443 to the internet (Sg)", Medium},
		{"a private network", Security{RulesAdded: []SecurityGroupRule{{Direction: "ingress", GroupID: "Sg", IPProtocol: "tcp", FromPort: "5432", ToPort: "5432", Peer: &RulePeer{Kind: "cidr-ip", Value: "10.0.0.0/16"}}}},
			"allows ingress from 10.0.0.0/16 on port 5432 (Sg)", Low},
		{"* on *", Security{StatementsAdded: []Statement{{Effect: "Allow", Actions: Targets{Values: []string{"*"}}, Resources: Targets{Values: []string{"*"}}}}},
			"grants every action on every resource (* on *)", Critical},
		{"public principal", Security{StatementsAdded: []Statement{{Effect: "Allow", Actions: Targets{Values: []string{"s3:GetObject"}}, Principals: Targets{Values: []string{"AWS:*"}}}}},
			"grants s3:GetObject to anyone (principal *)", Critical},
		{"service-wide", Security{StatementsAdded: []Statement{{Effect: "Allow", Actions: Targets{Values: []string{"s3:*"}}, Resources: Targets{Values: []string{"${Bucket.Arn}"}}}}},
			"grants s3:* on ${Bucket.Arn}", High},
		{"any resource", Security{StatementsAdded: []Statement{{Effect: "Allow", Actions: Targets{Values: []string{"sqs:SendMessage"}}, Resources: Targets{Values: []string{"*"}}}}},
			"grants sqs:SendMessage on every resource (*)", High},
		{"another account", Security{StatementsAdded: []Statement{{Effect: "Allow", Actions: Targets{Values: []string{"kms:Decrypt"}}, Resources: Targets{Values: []string{"${Key.Arn}"}},
			Principals: Targets{Values: []string{"AWS:arn:aws:iam::999999999999:root"}}}}}, "grants kms:Decrypt to account arn:aws:iam::999999999999:root", High},
		{"scoped", Security{StatementsAdded: []Statement{{Effect: "Allow", Actions: Targets{Values: []string{"dynamodb:PutItem"}}, Resources: Targets{Values: []string{"${Table.Arn}"}}}}},
			"grants dynamodb:PutItem on ${Table.Arn}", Low},
		{"admin", Security{ManagedPoliciesAdded: []ManagedPolicyAttachment{{IdentityARN: "${Role}", ManagedPolicyARN: "arn:aws:iam::aws:policy/AdministratorAccess"}}},
			"attaches AdministratorAccess to ${Role}", Critical},
		{"deny removed", Security{StatementsRemoved: []Statement{{Effect: "Deny", Actions: Targets{Values: []string{"s3:DeleteBucket"}}}}},
			"removes a restriction (Deny s3:DeleteBucket)", High},
	} {
		f, ok := c.sec.Worst()
		if !ok || f.What != c.want || f.Severity != c.sev {
			t.Errorf("%s: %+v, want %q (%s)", c.name, f, c.want, c.sev)
		}
	}
}
