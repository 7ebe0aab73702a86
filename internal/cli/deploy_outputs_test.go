package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// A merge where a stack only gains an export and the stack after it imports it: both change
// sets list no resource changes, and both must execute (aws/aws-cdk#2029), or the importer
// fails with "No export named … found".
func TestDeployCommandExecutesOutputsOnlyChanges(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	dir := writeDeployAssembly(t, "lb-topic")
	if code, stdout, stderr := run(t, "deploy", dir, "--revision", "rev1"); code != ExitOK {
		t.Fatalf("first deploy: exit %d\n%s\n%s", code, stdout, stderr)
	}

	writeJSONFile(t, filepath.Join(dir, "Base.template.json"), map[string]any{
		"Resources": map[string]any{
			"Topic": map[string]any{"Type": "AWS::SNS::Topic", "Properties": map[string]any{"TopicName": "lb-topic"}}},
		"Outputs": map[string]any{"TopicArn": map[string]any{
			"Value": map[string]any{"Ref": "Topic"}, "Export": map[string]any{"Name": "Base:TopicArn"}}}})
	writeJSONFile(t, filepath.Join(dir, "App.template.json"), map[string]any{
		"Resources": map[string]any{
			"Queue": map[string]any{"Type": "AWS::SQS::Queue", "Properties": map[string]any{"QueueName": "app-queue"}}},
		"Outputs": map[string]any{"Target": map[string]any{"Value": map[string]any{"Fn::ImportValue": "Base:TopicArn"}}}})
	code, stdout, stderr := run(t, "deploy", dir, "--revision", "rev2", "--format", "json")
	var rep struct {
		Stacks []struct {
			Stack, Result, Status string
			Outputs               map[string]string
		}
		Failed bool
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != ExitOK || rep.Failed || len(rep.Stacks) != 2 {
		t.Fatalf("export then import: exit %d %v\n%s\n%s", code, err, stdout, stderr)
	}
	for _, s := range rep.Stacks {
		if s.Result != "deployed" || s.Status != "UPDATE_COMPLETE" {
			t.Errorf("%s: %s %s", s.Stack, s.Result, s.Status)
		}
	}
	if got := rep.Stacks[1].Outputs["Target"]; got != "arn:aws:sns:us-east-1:123456789012:lb-topic" {
		t.Errorf("imported value: %q\n%s", got, stdout)
	}

	code, stdout, _ = run(t, "deploy", dir, "--revision", "rev2")
	if code != ExitOK || !strings.Contains(stdout, "Deploy: 2 no changes") {
		t.Errorf("deployed again: exit %d\n%s", code, stdout)
	}
}
