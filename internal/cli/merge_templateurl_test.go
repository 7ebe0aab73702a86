package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

func stackResources(t *testing.T, srv *moto.Server, name string) []string {
	cfn := cloudformation.NewFromConfig(srv.Config())
	out, err := cfn.DescribeStackResources(context.Background(), &cloudformation.DescribeStackResourcesInput{StackName: ptr(name)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range out.StackResources {
		ids = append(ids, aws.ToString(r.LogicalResourceId)+"("+aws.ToString(r.ResourceType)+")")
	}
	sort.Strings(ids)
	return ids
}

var evilTemplate = map[string]any{"Resources": map[string]any{
	"Queue": map[string]any{"Type": "AWS::SQS::Queue", "Properties": map[string]any{"QueueName": "app-queue"}},
	"Escalate": map[string]any{"Type": "AWS::IAM::Role", "Properties": map[string]any{
		"AssumeRolePolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow",
			"Principal": map[string]any{"AWS": "arn:aws:iam::999999999999:root"}, "Action": "sts:AssumeRole"}}},
		"ManagedPolicyArns": []any{"arn:aws:iam::aws:policy/AdministratorAccess"}}}}}

// the stack's templateFile (what the review diffs and shows) is benign; its
// stackTemplateAssetObjectUrl points at a *different* file, published by its own asset manifest.
// The assembly is deterministic: review and deploy see the very same bytes, so the identity
// matches, and the deploy creates what the review never showed (an admin role for a foreign
// account), with on-unreviewed: refuse and require-approval: broadening.
func TestMergeDeploysTheComparedTemplateNotTheOneItsURLNames(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)

	dir := writeBoundAssembly(t)
	writeJSONFile(t, filepath.Join(dir, "evil.json"), evilTemplate)
	writeJSONFile(t, filepath.Join(dir, "App.assets.json"), map[string]any{"version": "36.0.0", "files": map[string]any{
		"abc": map[string]any{"source": map[string]any{"path": "asset.abc", "packaging": "zip"},
			"destinations": map[string]any{"123456789012-us-east-1": map[string]any{
				"bucketName": "cdk-hnb659fds-assets-123456789012-us-east-1", "objectKey": "abc.zip", "region": "us-east-1",
				"assumeRoleArn": "arn:${AWS::Partition}:iam::123456789012:role/cdk-hnb659fds-file-publishing-role-123456789012-us-east-1"}}},
		"tpl": map[string]any{"source": map[string]any{"path": "evil.json", "packaging": "file"},
			"destinations": map[string]any{"123456789012-us-east-1": map[string]any{
				"bucketName": "cdk-hnb659fds-assets-123456789012-us-east-1", "objectKey": "tpl.json", "region": "us-east-1",
				"assumeRoleArn": "arn:${AWS::Partition}:iam::123456789012:role/cdk-hnb659fds-file-publishing-role-123456789012-us-east-1"}}},
	}})
	editManifest(t, dir, func(arts map[string]any) {
		appProps(arts)["stackTemplateAssetObjectUrl"] = "s3://cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}/tpl.json"
	})

	// What the review shows: the benign templateFile.
	code, stdout, stderr := run(t, "review", "--head-assembly", dir, "--format", "markdown")
	t.Logf("review of the PR head: exit %d\n%s\n%s", code, stdout, stderr)

	gh := mergedWithReview(t, dir, reviewMarker(t, dir, "h7"))
	gh.Permissions["alice"] = "maintain"
	t.Setenv("INPUT_ON-UNREVIEWED", "refuse")
	t.Setenv("INPUT_REQUIRE-APPROVAL", "broadening")
	code, stdout, stderr = run(t, "action")
	t.Logf("merge deploy: exit %d\n%s\n%s", code, stdout, stderr)
	got := stackResources(t, srv, "App")
	t.Logf("App's resources after the merge deploy: %v", got)
	if strings.Contains(strings.Join(got, ","), "Escalate") {
		t.Errorf("the merge deploy created resources its review never showed: %v", got)
	}
}

// the URL names an object outside the assembly altogether (one the attacker can
// rewrite after the review): only the URL string is in the identity.
func TestMergeDeploysTheComparedTemplateNotAnObjectOutside(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)

	// An object the attacker controls (here: put into a bucket of theirs, after the review).
	s3c := s3.NewFromConfig(srv.Config(), func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := s3c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: ptr("mallory-public")}); err != nil {
		t.Fatal(err)
	}
	dir := writeBoundAssembly(t)
	editManifest(t, dir, func(arts map[string]any) {
		appProps(arts)["stackTemplateAssetObjectUrl"] = "s3://mallory-public/t.json"
	})
	gh := ghserver.NewWith(t, ghserver.Options{Tokens: map[string]ghserver.Identity{appToken: ghserver.AppToken}})
	gh.Pulls[7] = mergedPR(7, "h7")
	gh.CommitPulls["cccccccccccccccccccccccccccccccccccccccc"] = []int{7}
	gh.Add(7, "cdk-deployer[bot]", reviewMarker(t, dir, "h7"))

	var buf bytes.Buffer
	b, _ := os.ReadFile(filepath.Join(dir, "App.template.json"))
	buf.Write(b)
	_ = buf
	writeJSONFile(t, filepath.Join(t.TempDir(), "x.json"), evilTemplate)
	evil, _ := jsonBytes(evilTemplate)
	if _, err := s3c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: ptr("mallory-public"), Key: ptr("t.json"),
		Body: bytes.NewReader(evil)}); err != nil {
		t.Fatal(err)
	}
	actionEnv(t, gh, appToken, "push", pushMergeEvent(t))
	t.Setenv("INPUT_ASSEMBLY", dir)
	t.Setenv("INPUT_ON-UNREVIEWED", "refuse")
	code, stdout, stderr := run(t, "action")
	t.Logf("merge deploy: exit %d\n%s\n%s", code, stdout, stderr)
	got := stackResources(t, srv, "App")
	t.Logf("App's resources after the merge deploy: %v", got)
	if strings.Contains(strings.Join(got, ","), "Escalate") {
		t.Errorf("the merge deploy created resources its review never showed: %v", got)
	}
}

func jsonBytes(v any) ([]byte, error) { return json.Marshal(v) }
