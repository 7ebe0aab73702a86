package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// writeDeployAssembly writes a two-stack assembly for moto's account, the second depending on
// the first, deployed through the bootstrap roles.
func writeDeployAssembly(t *testing.T, topic string) string {
	dir := t.TempDir()
	stack := func(name string, deps ...string) map[string]any {
		props := map[string]any{"templateFile": name + ".template.json",
			"assumeRoleArn":                     "arn:${AWS::Partition}:iam::123456789012:role/cdk-hnb659fds-deploy-role-123456789012-us-east-1",
			"cloudFormationExecutionRoleArn":    "arn:${AWS::Partition}:iam::123456789012:role/cdk-hnb659fds-cfn-exec-role-123456789012-us-east-1",
			"requiresBootstrapStackVersion":     6,
			"bootstrapStackVersionSsmParameter": "/cdk-bootstrap/hnb659fds/version"}
		a := map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1", "properties": props}
		if len(deps) > 0 {
			a["dependencies"] = deps
		}
		return a
	}
	writeJSONFile(t, filepath.Join(dir, "manifest.json"), map[string]any{"version": "36.0.0", "artifacts": map[string]any{
		"Base": stack("Base"), "App": stack("App", "Base")}})
	writeJSONFile(t, filepath.Join(dir, "Base.template.json"), map[string]any{"Resources": map[string]any{
		"Topic": map[string]any{"Type": "AWS::SNS::Topic", "Properties": map[string]any{"TopicName": topic}}}})
	writeJSONFile(t, filepath.Join(dir, "App.template.json"), map[string]any{"Resources": map[string]any{
		"Queue": map[string]any{"Type": "AWS::SQS::Queue", "Properties": map[string]any{"QueueName": "app-queue"}}}})
	return dir
}

func TestDeployCommandAgainstMoto(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	dir := writeDeployAssembly(t, "base-topic")
	outputs := filepath.Join(t.TempDir(), "outputs.json")

	code, stdout, stderr := run(t, "deploy", dir, "--revision", "abc123", "--format", "json", "--outputs-file", outputs)
	var rep struct {
		Stacks []struct{ Stack, StackName, Result, Status string }
		Failed bool
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != ExitOK || len(rep.Stacks) != 2 || rep.Failed ||
		rep.Stacks[0].Stack != "Base" || rep.Stacks[0].Result != "deployed" || rep.Stacks[1].Status != "CREATE_COMPLETE" {
		t.Fatalf("first deploy: exit %d %v\n%s\n%s", code, err, stdout, stderr)
	}
	if strings.Index(stderr, "Base: deploying") > strings.Index(stderr, "App: deploying") || !strings.Contains(stderr, "[2/2] App: deployed") {
		t.Errorf("progress:\n%s", stderr)
	}
	var outs map[string]map[string]string
	if b, err := os.ReadFile(outputs); err != nil || json.Unmarshal(b, &outs) != nil || len(outs) != 2 || outs["App"] == nil {
		t.Errorf("outputs file: %v %s", err, b)
	}
	code, stdout, _ = run(t, "deploy", dir, "--stacks", "App")
	if code != ExitOK || strings.Count(stdout, "no changes") != 3 || !strings.Contains(stdout, "Deploy: 2 no changes") {
		t.Errorf("second deploy (App and its dependency): exit %d\n%s", code, stdout)
	}

	// A change granting IAM permissions is refused under --require-approval broadening, and
	// goes through with never (the default).
	writeJSONFile(t, filepath.Join(dir, "App.template.json"), map[string]any{"Resources": map[string]any{
		"Queue": map[string]any{"Type": "AWS::SQS::Queue", "Properties": map[string]any{"QueueName": "app-queue"}},
		"Role": map[string]any{"Type": "AWS::IAM::Role", "Properties": map[string]any{
			"AssumeRolePolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow",
				"Principal": map[string]any{"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}}},
			"Policies": []any{map[string]any{"PolicyName": "all-sqs", "PolicyDocument": map[string]any{
				"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}}}}}}}}})
	code, stdout, stderr = run(t, "deploy", dir, "--stacks", "App", "--no-deps", "--require-approval", "broadening")
	if code != ExitFailure || !strings.Contains(stdout, "refused") || !strings.Contains(stdout, "broadens permissions (2 IAM statement(s) added)") {
		t.Errorf("broadening: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "deploy", dir, "--stacks", "App", "--no-deps")
	if code != ExitOK || !strings.Contains(stdout, "UPDATE_COMPLETE") {
		t.Errorf("approved: exit %d\n%s", code, stdout)
	}

	// An environment that is not bootstrapped fails first; its dependent is skipped.
	code, stdout, stderr = run(t, "deploy", fixture(t, "aws-cdk-lib@2.276.0/multi-env"), "--stacks", "service-us", "--no-publish")
	if code != ExitFailure || !strings.Contains(stdout, "failed      Network") || !strings.Contains(stdout, "skipped     Service") ||
		!strings.Contains(stdout, "cdk bootstrap aws://111111111111/us-east-1") || !strings.Contains(stdout, "depends on Network, which did not deploy") {
		t.Errorf("unbootstrapped: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Each stack's assets are published just before it deploys: an asset that cannot be
	// published fails its stack (and skips its dependents) before any change set.
	code, stdout, stderr = run(t, "deploy", fixture(t, "aws-cdk-lib@2.276.0/multi-env"), "--stacks", "service-us")
	if code != ExitFailure || !strings.Contains(stdout, "failed      Network") || !strings.Contains(stdout, "Network (aws://111111111111/us-east-1): publish its assets") ||
		!strings.Contains(stdout, "is the environment bootstrapped") || !strings.Contains(stdout, "skipped     Service") ||
		!strings.Contains(stderr, "Network: publishing its assets") || strings.Contains(stderr, "Network: deploying") {
		t.Errorf("unpublishable: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// An asset built by running a command from the assembly is refused before anything deploys
// (unless --allow-executables), not half way through.
func TestDeployRefusesExecutableAssetsUpFront(t *testing.T) {
	srv := moto.Start(t)
	moto.Env(t, srv.URL)
	dir := writeDeployAssembly(t, "exec-topic")
	writeJSONFile(t, filepath.Join(dir, "App.assets.json"), map[string]any{"version": "36.0.0", "files": map[string]any{
		"abc": map[string]any{"source": map[string]any{"executable": []string{"sh", "-c", "echo built"}},
			"destinations": map[string]any{"d": map[string]any{"bucketName": "b", "objectKey": "k", "region": "us-east-1"}}}}})
	var manifest map[string]any
	raw, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	json.Unmarshal(raw, &manifest)
	arts := manifest["artifacts"].(map[string]any)
	arts["App.assets"] = map[string]any{"type": "cdk:asset-manifest", "properties": map[string]any{"file": "App.assets.json"}}
	arts["App"].(map[string]any)["dependencies"] = []string{"Base", "App.assets"}
	writeJSONFile(t, filepath.Join(dir, "manifest.json"), manifest)

	code, stdout, stderr := run(t, "deploy", dir)
	if code != ExitUsage || !strings.Contains(stderr, "nothing deployed: these assets are built by running code from the assembly") ||
		strings.Contains(stderr, "deploying") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}
