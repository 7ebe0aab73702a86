package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// writeServiceAssembly writes an assembly of one stack, Web, with a log group; with service, it
// adds what aws-cdk-lib synthesizes for a Fargate task definition pulling from ECR: an execution
// role whose default policy pulls from the repository, logs to the group and gets the registry's
// authorization token on "*" (the action has no resource-level permissions); extra statements
// are added to that policy.
func writeServiceAssembly(t *testing.T, service bool, extra ...map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	resources := map[string]any{"Logs": map[string]any{"Type": "AWS::Logs::LogGroup"}}
	if service {
		statements := []any{
			map[string]any{"Effect": "Allow", "Resource": "arn:aws:ecr:us-east-1:123456789012:repository/app",
				"Action": []any{"ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"}},
			map[string]any{"Effect": "Allow", "Action": "ecr:GetAuthorizationToken", "Resource": "*"},
			map[string]any{"Effect": "Allow", "Action": []any{"logs:CreateLogStream", "logs:PutLogEvents"},
				"Resource": map[string]any{"Fn::GetAtt": []any{"Logs", "Arn"}}},
		}
		for _, s := range extra {
			statements = append(statements, s)
		}
		resources["ExecutionRole"] = map[string]any{"Type": "AWS::IAM::Role", "Properties": map[string]any{
			"AssumeRolePolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
				"Effect": "Allow", "Action": "sts:AssumeRole",
				"Principal": map[string]any{"Service": "ecs-tasks.amazonaws.com"}}}}}}
		resources["ExecutionRoleDefaultPolicy"] = map[string]any{"Type": "AWS::IAM::Policy", "Properties": map[string]any{
			"PolicyName": "ExecutionRoleDefaultPolicy", "Roles": []any{map[string]any{"Ref": "ExecutionRole"}},
			"PolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": statements}}}
		resources["TaskDef"] = map[string]any{"Type": "AWS::ECS::TaskDefinition", "Properties": map[string]any{
			"RequiresCompatibilities": []any{"FARGATE"}, "NetworkMode": "awsvpc", "Cpu": "256", "Memory": "512",
			"ExecutionRoleArn": map[string]any{"Fn::GetAtt": []any{"ExecutionRole", "Arn"}},
			"ContainerDefinitions": []any{map[string]any{"Name": "web", "Essential": true,
				"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:latest"}}}}
	}
	writeJSONFile(t, filepath.Join(dir, "Web.template.json"), map[string]any{"Resources": resources})
	writeJSONFile(t, filepath.Join(dir, "manifest.json"), map[string]any{"version": "36.0.0", "artifacts": map[string]any{
		"Web": map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"templateFile": "Web.template.json"}}}})
	return dir
}

// Issue 26, defect 4: every new ECS service was blocked by security-broadening at the default
// severity, because aws-cdk-lib grants ecr:GetAuthorizationToken on "*" and the action cannot be
// scoped. The grant is shown, rated low with its reason, and blocks nothing; a grant on "*" that
// could have been scoped, added to the same policy, still blocks.
func TestReviewNewECSServiceIsNotBlockedByItsUnscopableGrant(t *testing.T) {
	base := writeServiceAssembly(t, false)
	head := writeServiceAssembly(t, true)
	broader := writeServiceAssembly(t, true, map[string]any{"Effect": "Allow", "Action": "s3:PutObject", "Resource": "*"})
	gate := []string{"--fail-on", "security-broadening"}
	runCases(t, []cliCase{
		{"the standard execution role", append([]string{"review", "--base-assembly", base, "--head-assembly", head}, gate...),
			ExitOK, nil, nil},
		{"with every gate at its default", []string{"review", "--base-assembly", base, "--head-assembly", head},
			ExitOK, nil, nil},
		{"a scopable grant on * still blocks", append([]string{"review", "--base-assembly", base, "--head-assembly", broader},
			gate...), ExitVerdict, []string{"✗ gate security-broadening blocks", "s3:PutObject on every resource (*)"}, nil},
	})
	if _, out, _ := run(t, "review", "--base-assembly", base, "--head-assembly", head); strings.Contains(out, "✗") {
		t.Errorf("the standard execution role blocks:\n%s", out)
	}
	_, out, _ := run(t, "review", "--base-assembly", base, "--head-assembly", head, "--security-severity", "low")
	const want = "Web: grants ecr:GetAuthorizationToken on every resource (*): " +
		"cannot be scoped: the action supports no resource-level permissions (low)"
	if !strings.Contains(out, want) {
		t.Errorf("review at --security-severity low lacks %q:\n%s", want, out)
	}
}
