package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/review"
)

// TestHeadlineNamesTheCause checks that the review's headline names what the change does before
// what follows from it: the resource whose own properties replace it, not one replaced because it
// references it; the table that gains an index, not the low-rated grants that name the index; and a
// destroyed resource that keeps no data without "its data".
func TestHeadlineNamesTheCause(t *testing.T) {
	t.Parallel()
	const vpc = `"Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "%s"}},
		"PublicSubnet": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.0.0.0/24"}},
		"ApiTargetGroup": {"Type": "AWS::ElasticLoadBalancingV2::TargetGroup",
			"Properties": {"VpcId": {"Ref": "Vpc"}, "Port": 80, "Protocol": "HTTP"}}`
	const table = `"Orders": {"Type": "AWS::DynamoDB::Table", "Properties": {
			"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
			"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]%s}},
		"ApiRoleDefaultPolicy": {"Type": "AWS::IAM::Policy", "Properties": {"PolicyName": "p", "Roles": ["r"],
			"PolicyDocument": {"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
				"Action": ["dynamodb:GetItem", "dynamodb:Query"], "Resource": [{"Fn::GetAtt": ["Orders", "Arn"]}%s]}]}}}`
	const gsi = `, "GlobalSecondaryIndexes": [{"IndexName": "byDate",
		"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]`
	const index = `, {"Fn::Join": ["", [{"Fn::GetAtt": ["Orders", "Arn"]}, "/index/*"]]}`
	const queue = `"Queue": {"Type": "AWS::SQS::Queue"}`
	cases := []struct {
		name, old, new string
		want           string
		notIn          string // must not appear in the text view
	}{
		{
			name: "a VPC's CIDR replaces the subnet and target group that reference it",
			old:  fmt.Sprintf(vpc, "10.0.0.0/16"), new: fmt.Sprintf(vpc, "10.1.0.0/16"),
			want: "1 stack changes · 3 replacements (Vpc in Net and 2 resources that reference it)",
		},
		{
			name: "a table gains an index, widening low-rated grants",
			old:  fmt.Sprintf(table, "", ""), new: fmt.Sprintf(table, gsi, index),
			want: "1 stack changes · 2 updates (Orders in Net) · permissions broadened (low)",
		},
		{
			name: "a topic is destroyed",
			old:  `"Alerts": {"Type": "AWS::SNS::Topic"}, ` + queue, new: queue,
			want:  "1 stack changes · 1 destroy (Alerts in Net)",
			notIn: "its data",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := &review.Report{Key: "k", Stacks: []*cfndiff.StackDiff{
				cfndiff.DiffTemplates("Net", template(t, tc.old), template(t, tc.new), cfndiff.Options{})}}
			if got := reviewHeadline(rep); got != tc.want {
				t.Errorf("headline\n got: %s\nwant: %s", got, tc.want)
			}
			var text bytes.Buffer
			if err := ReviewText(&text, rep, DiffOptions{}); err != nil {
				t.Fatal(err)
			}
			if tc.notIn != "" && strings.Contains(text.String(), tc.notIn) {
				t.Errorf("the text view says %q:\n%s", tc.notIn, text.String())
			}
		})
	}
}

func template(t *testing.T, resources string) *cfn.Object {
	t.Helper()
	o, err := cfn.Parse([]byte(`{"Resources": {` + resources + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The terminal's first line leads with the verdict, as the comment does, and says "no changes"
// once.
func TestTerminalHeadlineLeadsWithTheVerdict(t *testing.T) {
	queue := `"Q": {"Type": "AWS::SQS::Queue"}`
	blocks := []review.Gate{{Name: review.GateDestroy, Triggered: true, Enforced: true}}
	cases := []struct {
		name, old, new string
		gates          []review.Gate
		want           string
	}{
		{"nothing changes", queue, queue, nil, "no changes"},
		{"a queue is added", queue, queue + `, "R": {"Type": "AWS::SQS::Queue"}`, nil, "safe · 1 stack changes"},
		{"a queue is destroyed", queue + `, "R": {"Type": "AWS::SQS::Queue"}`, queue, blocks,
			"needs approval · 1 stack changes · 1 destroy (R in Net)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := &review.Report{Key: "k", Gates: tc.gates, Stacks: []*cfndiff.StackDiff{
				cfndiff.DiffTemplates("Net", template(t, tc.old), template(t, tc.new), cfndiff.Options{})}}
			if got := terminalHeadline(rep); got != tc.want {
				t.Errorf("terminal headline\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}
