package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// a nested stack whose aws:asset:path metadata (what the review reads and diffs)
// names a benign file in the assembly, while its TemplateURL (what CloudFormation reads) is an
// object the attacker controls. Only the parent template's bytes are in the identity.
func TestMergeRefusesANestedTemplateURLNoReviewShowed(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	s3c := s3.NewFromConfig(srv.Config(), func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := s3c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: ptr("mallory-public")}); err != nil {
		t.Fatal(err)
	}
	dir := writeBoundAssembly(t)
	writeJSONFile(t, filepath.Join(dir, "Nested.nested.template.json"), map[string]any{"Resources": map[string]any{
		"Q2": map[string]any{"Type": "AWS::SQS::Queue", "Properties": map[string]any{"QueueName": "nested-q"}}}})
	writeJSONFile(t, filepath.Join(dir, "App.template.json"), map[string]any{"Resources": map[string]any{
		"Queue": map[string]any{"Type": "AWS::SQS::Queue", "Properties": map[string]any{"QueueName": "app-queue"}},
		"Nested": map[string]any{"Type": "AWS::CloudFormation::Stack",
			"Metadata":   map[string]any{"aws:asset:path": "Nested.nested.template.json"},
			"Properties": map[string]any{"TemplateURL": "https://s3.us-east-1.amazonaws.com/mallory-public/n.json"}}}})

	code, stdout, stderr := run(t, "review", "--head-assembly", dir, "--format", "markdown")
	t.Logf("review of the PR head: exit %d\n%s\n%s", code, stdout, stderr)

	mergedWithReview(t, dir, reviewMarker(t, dir, "h7"))
	// After the review: the attacker writes the nested template.
	evil, _ := jsonBytes(evilTemplate)
	if _, err := s3c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: ptr("mallory-public"), Key: ptr("n.json"),
		Body: bytes.NewReader(evil)}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INPUT_ON-UNREVIEWED", "refuse")
	code, stdout, stderr = run(t, "action")
	t.Logf("merge deploy: exit %d\n%s\n%s", code, stdout, stderr)
	cfn := cloudformation.NewFromConfig(srv.Config())
	out, err := cfn.DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, s := range out.Stacks {
		for _, r := range stackResources(t, srv, *s.StackName) {
			all = append(all, *s.StackName+":"+r)
		}
	}
	t.Logf("resources: %v", all)
	if strings.Contains(strings.Join(all, ","), "Escalate") {
		t.Errorf("a nested template from an object no review showed deployed: %v", all)
	}
}
