package cli

import (
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

	code, stdout, stderr := run(t, "deploy", dir, "--revision", "abc123")
	if code != ExitOK || !strings.Contains(stdout, "deployed   Base  CREATE_COMPLETE") || !strings.Contains(stdout, "deployed   App  CREATE_COMPLETE") ||
		strings.Index(stdout, "Base") > strings.Index(stdout, "App") {
		t.Fatalf("first deploy: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "deploy", dir, "--stacks", "App")
	if code != ExitOK || strings.Count(stdout, "no changes") != 2 {
		t.Errorf("second deploy (App and its dependency): exit %d\n%s", code, stdout)
	}
	// An environment that is not bootstrapped fails first; its dependent is skipped.
	code, stdout, stderr = run(t, "deploy", fixture(t, "aws-cdk-lib@2.276.0/multi-env"), "--stacks", "service-us")
	if code != ExitFailure || !strings.Contains(stdout, "failed     Network") || !strings.Contains(stdout, "skipped    Service") ||
		!strings.Contains(stderr, "cdk bootstrap aws://111111111111/us-east-1") {
		t.Errorf("unbootstrapped: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
