package deployed

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// A deployed stack's template and its nested stacks' templates, as CloudFormation holds them;
// a stack that does not exist is not deployed.
func TestReadStackWithNestedStacks(t *testing.T) {
	srv := moto.Start(t)
	ctx := context.Background()
	cfg := srv.Config()
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("templates")}); err != nil {
		t.Fatal(err)
	}
	const nested = `{"Resources":{"Inner":{"Type":"AWS::SSM::Parameter","Properties":{"Name":"/inner","Type":"String","Value":"v"}}}}`
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("templates"), Key: aws.String("nested.json"), Body: strings.NewReader(nested)}); err != nil {
		t.Fatal(err)
	}
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/templates/nested.json"
	parent := `{"Resources":{"Child":{"Type":"AWS::CloudFormation::Stack","Properties":{"TemplateURL":"` + url + `"}},
 "Outer":{"Type":"AWS::SSM::Parameter","Properties":{"Name":"/outer","Type":"String","Value":"v"}}}}`
	client := cloudformation.NewFromConfig(cfg)
	if _, err := client.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String("parent"), TemplateBody: aws.String(parent)}); err != nil {
		t.Fatal(err)
	}
	st := readStack(ctx, client, "parent")
	if st.Err != "" || !st.Deployed || st.Template == nil || st.Nested["Child"] == nil {
		t.Fatalf("parent: %+v", st)
	}
	if got := cfn.JSON(st.Nested["Child"]); !strings.Contains(got, "/inner") {
		t.Errorf("nested template: %s", got)
	}
	if st := readStack(ctx, client, "nope"); st.Deployed || st.Err != "" {
		t.Errorf("missing stack: %+v", st)
	}
}
