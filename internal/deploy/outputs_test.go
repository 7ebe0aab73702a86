package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/deploy"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// A stack that only gains an export gets a change set with no resource changes, which
// CloudFormation (and moto) create executable: deploying it must execute it, or the stack that
// imports the export fails with "No export named … found" (aws/aws-cdk#2029). A change set
// CloudFormation finds empty is still "no changes".
func TestDeployExecutesAnOutputsOnlyChangeSet(t *testing.T) {
	_, proxy := bootstrappedBehindProxy(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const lb = `{"Resources":{"Topic":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"lb"}}}`
	write("Lb.json", lb+`}`)
	write("Mon.json", `{"Resources":{"Queue":{"Type":"AWS::SQS::Queue","Properties":{"QueueName":"mon"}}},`+
		`"Outputs":{"Target":{"Value":{"Fn::ImportValue":"Lb:TopicArn"}}}}`)
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := &deploy.Deployer{Sessions: awsconfig.NewSessions(cfg, awsconfig.Options{}), Poll: 20 * time.Millisecond,
		ReadTemplate: func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, p)) }}
	stack := func(id, cs string, deps ...string) deployplan.Stack {
		return deployplan.Stack{ID: id, StackName: id, Env: "aws://123456789012/us-east-1", ChangeSetName: cs,
			Environment: assembly.Environment{Account: moto.Account, Region: moto.Region}, DependsOn: deps,
			Template: deployplan.Template{Path: id + ".json", Inline: true}}
	}
	calls := func(from int, op string) int { return countCalls(proxy, from, op) }

	if out, err := d.Deploy(ctx, stack("Lb", "cdkbot-1")); err != nil || out.Result != deploy.Deployed {
		t.Fatalf("first deploy of Lb: %+v %v", out, err)
	}

	// Lb gains an export (its resources unchanged); the new Mon imports it.
	write("Lb.json", lb+`,"Outputs":{"TopicArn":{"Value":{"Ref":"Topic"},"Export":{"Name":"Lb:TopicArn"}}}}`)
	from := len(proxy.Calls)
	outs, err := d.Run(ctx, &deployplan.Plan{Stacks: []deployplan.Stack{stack("Lb", "cdkbot-2"), stack("Mon", "cdkbot-2", "Lb")}})
	var got []string
	for _, o := range outs {
		got = append(got, o.Stack+"="+string(o.Result)+" "+o.Status)
	}
	if err != nil || strings.Join(got, ", ") != "Lb=deployed UPDATE_COMPLETE, Mon=deployed CREATE_COMPLETE" {
		t.Fatalf("export then import: %v %v\n%v", got, err, proxy.Calls[from:])
	}
	if outs[0].Outputs["TopicArn"] != "arn:aws:sns:us-east-1:123456789012:lb" ||
		outs[1].Outputs["Target"] != "arn:aws:sns:us-east-1:123456789012:lb" {
		t.Errorf("outputs: %v %v", outs[0].Outputs, outs[1].Outputs)
	}

	// The same template, written differently: past the text fast path, CloudFormation finds no
	// changes, and nothing is executed.
	write("Lb.json", "\n"+strings.ReplaceAll(lb, `,"`, `, "`)+
		`, "Outputs":{"TopicArn":{"Value":{"Ref":"Topic"},"Export":{"Name":"Lb:TopicArn"}}}}`)
	from = len(proxy.Calls)
	out, err := d.Deploy(ctx, stack("Lb", "cdkbot-3"))
	if err != nil || out.Result != deploy.NoChanges || out.Outputs["TopicArn"] == "" ||
		calls(from, "CreateChangeSet") != 1 || calls(from, "ExecuteChangeSet") != 0 || calls(from, "DeleteChangeSet") != 1 {
		t.Fatalf("really no change: %+v %v\n%v", out, err, proxy.Calls[from:])
	}
}
