package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/deploy"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

const bucket = "cdk-hnb659fds-assets-123456789012-us-east-1"

func template(value string) string {
	return `{"Resources":{"Queue":{"Type":"AWS::SQS::Queue","Properties":{"QueueName":"cdkbot-deploy-test"}},` +
		`"Param":{"Type":"AWS::SSM::Parameter","Properties":{"Name":"/cdkbot/test","Type":"String","Value":"` + value + `"}}}}`
}

// bootstrappedBehindProxy starts moto with the real bootstrap stack and points the AWS SDK at
// a recording proxy in front of it.
func bootstrappedBehindProxy(t *testing.T) (*moto.Server, *moto.Proxy) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	proxy := srv.NewProxy(t)
	moto.Env(t, proxy.URL)
	return srv, proxy
}

// countCalls counts the proxy's calls of operation op from call number from.
func countCalls(p *moto.Proxy, from int, op string) int {
	n := 0
	for _, c := range p.Calls[from:] {
		if strings.Contains(c, " "+op+" ") {
			n++
		}
	}
	return n
}

// Into moto with the real bootstrap stack: a stack created through a change set from a
// template object (as published), updated from an inline body, then deployed again with no
// change set at all; a too-old bootstrap stops before any change set.
func TestDeployCreateUpdateNoChangeAndBootstrapCheck(t *testing.T) {
	srv, proxy := bootstrappedBehindProxy(t)
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "App.template.json"), []byte(template("v1")), 0o644)
	if _, err := awsconfig.S3(srv.Config()).PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("app.json"),
		Body: strings.NewReader(template("v1"))}); err != nil {
		t.Fatal(err)
	}
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	d := &deploy.Deployer{Sessions: awsconfig.NewSessions(cfg, awsconfig.Options{}), Poll: 50 * time.Millisecond,
		ReadTemplate: func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, p)) },
		Events:       func(e deploy.Event) { events = append(events, e.LogicalID+" "+e.Status) }}
	stack := deployplan.Stack{ID: "App", StackName: "App", Environment: assembly.Environment{Account: moto.Account, Region: moto.Region},
		Env:              "aws://123456789012/us-east-1",
		AssumeRoleARN:    "arn:aws:iam::123456789012:role/cdk-hnb659fds-deploy-role-123456789012-us-east-1",
		ExecutionRoleARN: "arn:aws:iam::123456789012:role/cdk-hnb659fds-cfn-exec-role-123456789012-us-east-1",
		Bootstrap:        &deployplan.Bootstrap{Parameter: "/cdk-bootstrap/hnb659fds/version", MinVersion: 6},
		Template:         deployplan.Template{Path: "App.template.json", URL: "https://s3.us-east-1.amazonaws.com/" + bucket + "/app.json"},
		Tags:             map[string]string{"team": "core"}, ChangeSetName: "cdkbot-abc123"}
	param := func() string {
		out, err := ssm.NewFromConfig(srv.Config()).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/cdkbot/test")})
		if err != nil {
			return err.Error()
		}
		return aws.ToString(out.Parameter.Value)
	}
	calls := func(from int, op string) int { return countCalls(proxy, from, op) }

	out, err := d.Deploy(ctx, stack)
	if err != nil || out.Result != deploy.Deployed || out.Status != "CREATE_COMPLETE" || param() != "v1" {
		t.Fatalf("create: %+v %v, param %s\nevents %v", out, err, param(), events)
	}
	if calls(0, "CreateChangeSet") != 1 || calls(0, "ExecuteChangeSet") != 1 {
		t.Errorf("calls: %v", proxy.Calls)
	}

	// Update from an inline body.
	os.WriteFile(filepath.Join(dir, "App.template.json"), []byte(template("v2")), 0o644)
	stack.Template = deployplan.Template{Path: "App.template.json", Inline: true}
	stack.ChangeSetName = "cdkbot-def456"
	out, err = d.Deploy(ctx, stack)
	if err != nil || out.Result != deploy.Deployed || out.Status != "UPDATE_COMPLETE" || param() != "v2" {
		t.Fatalf("update: %+v %v, param %s", out, err, param())
	}

	// Unchanged: no change set at all.
	from := len(proxy.Calls)
	out, err = d.Deploy(ctx, stack)
	if err != nil || out.Result != deploy.NoChanges || calls(from, "CreateChangeSet") != 0 {
		t.Fatalf("no-op: %+v %v %v", out, err, proxy.Calls[from:])
	}

	// Termination protection alone: CloudFormation's change set has no changes, yet it applies.
	stack.TerminationProtection = true
	out, err = d.Deploy(ctx, stack)
	desc, derr := cloudformation.NewFromConfig(srv.Config()).DescribeStacks(ctx,
		&cloudformation.DescribeStacksInput{StackName: aws.String("App")})
	if err != nil || derr != nil || out.Result != deploy.Deployed || !aws.ToBool(desc.Stacks[0].EnableTerminationProtection) {
		t.Fatalf("termination protection: %+v %v %v", out, err, derr)
	}
	stack.TerminationProtection = false
	if _, err = d.Deploy(ctx, stack); err != nil {
		t.Fatal(err)
	}

	// The environment's bootstrap (version 33) is older than required.
	stack.Bootstrap.MinVersion = 99
	from = len(proxy.Calls)
	_, err = d.Deploy(ctx, stack)
	if err == nil || !strings.Contains(err.Error(), "bootstrapped with version 33; this assembly needs version 99") ||
		!strings.Contains(err.Error(), "cdk bootstrap aws://123456789012/us-east-1") {
		t.Errorf("old bootstrap: %v", err)
	}
	if calls(from, "DescribeStacks")+calls(from, "CreateChangeSet") != 0 {
		t.Errorf("went past the bootstrap check: %v", proxy.Calls[from:])
	}
}

// A failing stack skips its dependents; an independent stack still deploys.
func TestRunSkipsDependentsOfAFailure(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.json"), []byte(`{"Resources":{"Topic":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"ok"}}}}`), 0o644)
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := &deploy.Deployer{Sessions: awsconfig.NewSessions(cfg, awsconfig.Options{}), Poll: 50 * time.Millisecond,
		ReadTemplate: func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, p)) }}
	env := assembly.Environment{Account: moto.Account, Region: moto.Region}
	stack := func(id string, deps ...string) deployplan.Stack {
		return deployplan.Stack{ID: id, StackName: id, Environment: env, Env: "aws://123456789012/us-east-1", ChangeSetName: "cdkbot-1",
			Template: deployplan.Template{Path: "ok.json", Inline: true}, DependsOn: deps,
			Bootstrap: &deployplan.Bootstrap{Parameter: "/cdk-bootstrap/hnb659fds/version", MinVersion: 6}}
	}
	broken := stack("Broken")
	broken.Bootstrap.MinVersion = 99 // fails before touching CloudFormation
	// Independent is a legacy stack whose template goes through the staging bucket.
	independent := stack("Independent")
	independent.Template = deployplan.Template{Path: "ok.json", UploadBucket: bucket, UploadKey: "cdk/Independent/t.yml",
		URL: "https://s3.us-east-1.amazonaws.com/" + bucket + "/cdk/Independent/t.yml"}
	p := &deployplan.Plan{Stacks: []deployplan.Stack{broken, independent, stack("Dependent", "Broken"), stack("Transitive", "Dependent")}}
	outs, err := d.Run(ctx, p)
	if err == nil || !strings.Contains(err.Error(), "stack Broken") {
		t.Fatalf("error %v", err)
	}
	var got []string
	for _, o := range outs {
		got = append(got, o.Stack+"="+string(o.Result))
	}
	if strings.Join(got, " ") != "Broken=failed Independent=deployed Dependent=skipped Transitive=skipped" {
		t.Errorf("outcomes: %v", got)
	}
}

// What moto does not emulate, stood in by rewriting its answers in the proxy: a stack busy
// with another operation is waited for; a resource failure is reported with its event's
// reason and the stack left in ROLLBACK_COMPLETE is deleted and created again; outputs are
// collected (moto gives change-set stacks none). An empty change set is moto's own answer.
func TestDeployWaitsFailsRecreatesAndCollectsOutputs(t *testing.T) {
	_, proxy := bootstrappedBehindProxy(t)
	ctx := context.Background()
	dir := t.TempDir()
	tpl := `{"Resources":{"Topic":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"svc"}}},"Outputs":{"TopicArn":{"Value":{"Ref":"Topic"}}}}`
	os.WriteFile(filepath.Join(dir, "svc.json"), []byte(tpl), 0o644)
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	d := &deploy.Deployer{Sessions: awsconfig.NewSessions(cfg, awsconfig.Options{}), Poll: 20 * time.Millisecond,
		ReadTemplate: func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, p)) },
		Events:       func(e deploy.Event) { events = append(events, e.Stack+" "+e.LogicalID+" "+e.Status+" "+e.Reason) }}
	stack := deployplan.Stack{ID: "Svc", StackName: "Svc", Environment: assembly.Environment{Account: moto.Account, Region: moto.Region},
		Env: "aws://123456789012/us-east-1", Template: deployplan.Template{Path: "svc.json", Inline: true}, ChangeSetName: "cdkbot-1"}
	calls := func(from int, op string) int { return countCalls(proxy, from, op) }

	// Creation fails: the stand-in reports a failed resource and a rolled-back stack.
	proxy.Rewrite = func(action string, body []byte) []byte {
		switch action {
		case "DescribeStackEvents":
			ev := "<member><EventId>fail-1</EventId><StackName>Svc</StackName><LogicalResourceId>Topic</LogicalResourceId>" +
				"<ResourceType>AWS::SNS::Topic</ResourceType><Timestamp>" + time.Now().UTC().Format(time.RFC3339) + "</Timestamp>" +
				"<ResourceStatus>CREATE_FAILED</ResourceStatus><ResourceStatusReason>Invalid parameter: TopicName</ResourceStatusReason></member>"
			return []byte(strings.Replace(string(body), "<StackEvents>", "<StackEvents>"+ev, 1))
		case "DescribeStacks":
			return []byte(strings.Replace(string(body), "<StackStatus>CREATE_COMPLETE<", "<StackStatus>ROLLBACK_COMPLETE<", 1))
		}
		return body
	}
	out, err := d.Deploy(ctx, stack)
	if err == nil || out.Result != deploy.Failed || out.Status != "ROLLBACK_COMPLETE" || len(out.Causes) != 1 ||
		out.Causes[0] != "Topic: Invalid parameter: TopicName" || !strings.Contains(err.Error(), "ended ROLLBACK_COMPLETE: Topic: Invalid parameter: TopicName") {
		t.Fatalf("failure: %+v %v", out, err)
	}
	if out.APICalls < 5 {
		t.Errorf("API calls counted: %d", out.APICalls)
	}

	// The next deploy finds it ROLLBACK_COMPLETE, deletes it, creates it again; its outputs are
	// the emulator's own (the launcher gives change-set stacks their outputs).
	first := true
	proxy.Rewrite = func(action string, body []byte) []byte {
		if action == "DescribeStacks" && first {
			first = false
			return []byte(strings.Replace(string(body), "<StackStatus>CREATE_COMPLETE<", "<StackStatus>ROLLBACK_COMPLETE<", 1))
		}
		return body
	}
	from := len(proxy.Calls)
	out, err = d.Deploy(ctx, stack)
	if err != nil || out.Result != deploy.Deployed || out.Status != "CREATE_COMPLETE" || out.Outputs["TopicArn"] != "arn:aws:sns:us-east-1:123456789012:svc" {
		t.Fatalf("re-create: %+v %v", out, err)
	}
	if calls(from, "DeleteStack") != 1 || calls(from, "CreateChangeSet") != 1 {
		t.Errorf("re-create calls: %v", proxy.Calls[from:])
	}

	// Another operation holds the stack for three checks: waited for, then an update whose
	// change set moto finds empty (only the tags differ, which moto does not compare) is
	// "no changes".
	busy := 3
	proxy.Rewrite = func(action string, body []byte) []byte {
		if action == "DescribeStacks" && busy > 0 {
			busy--
			return []byte(strings.Replace(string(body), "<StackStatus>CREATE_COMPLETE<", "<StackStatus>UPDATE_IN_PROGRESS<", 1))
		}
		return body
	}
	stack.Tags = map[string]string{"team": "core"}
	stack.ChangeSetName = "cdkbot-2"
	events = nil
	from = len(proxy.Calls)
	out, err = d.Deploy(ctx, stack)
	if err != nil || out.Result != deploy.NoChanges || calls(from, "CreateChangeSet") != 1 || calls(from, "ExecuteChangeSet") != 0 || busy != 0 {
		t.Fatalf("busy then empty: %+v %v %v", out, err, proxy.Calls[from:])
	}
	if len(events) != 1 || !strings.Contains(events[0], "UPDATE_IN_PROGRESS another operation is in progress") {
		t.Errorf("events: %q", events)
	}

	// A stack that stays busy gives up with what to do.
	proxy.Rewrite = func(action string, body []byte) []byte {
		return []byte(strings.Replace(string(body), "<StackStatus>CREATE_COMPLETE<", "<StackStatus>UPDATE_IN_PROGRESS<", 1))
	}
	d.BusyTimeout = 100 * time.Millisecond
	_, err = d.Deploy(ctx, stack)
	if err == nil || !strings.Contains(err.Error(), "stack Svc is still UPDATE_IN_PROGRESS after 100ms: another deployment is running") {
		t.Errorf("stuck: %v", err)
	}
}
