package deployed

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

const template = `{"Resources":{"P":{"Type":"AWS::SSM::Parameter","Properties":{"Name":"/a","Type":"String","Value":"v1"}}}}`

// A review's change set is deleted whatever happens: read to the end, cancelled while
// CloudFormation is still creating it, or failed.
func TestChangeSetsNeverOutliveTheReview(t *testing.T) {
	srv := moto.Start(t)
	proxy := srv.NewProxy(t)
	cfg := srv.Config()
	cfg.BaseEndpoint = aws.String(proxy.URL)
	ctx := context.Background()
	cfnc := cloudformation.NewFromConfig(cfg)
	if _, err := cfnc.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String("params"), TemplateBody: aws.String(template)}); err != nil {
		t.Fatal(err)
	}
	r := &Reader{Sessions: awsconfig.NewSessions(cfg, awsconfig.Options{}), Account: "123456789012", Region: moto.Region, Wait: 5 * time.Second}
	stack := &assembly.Stack{ID: "Params", StackName: "params", Environment: assembly.Environment{Account: "123456789012", Region: moto.Region}}
	left := func() int {
		out, err := cfnc.ListChangeSets(ctx, &cloudformation.ListChangeSetsInput{StackName: aws.String("params")})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Summaries)
	}
	edited := strings.Replace(template, `"/a"`, `"/b"`, 1)

	got, err := r.Verdicts(ctx, stack, []byte(edited), "cdkbot-review-1")
	if err != nil || got["P"] != "True" || left() != 0 {
		t.Fatalf("read: %v %v, %d left", got, err, left())
	}
	// Cancelled as soon as CloudFormation is asked how the change set is doing.
	cctx, cancel := context.WithCancel(ctx)
	proxy.Fault = func(r *http.Request, body []byte, _ int) *moto.Fault {
		if strings.Contains(string(body), "Action=DescribeChangeSet") {
			cancel()
		}
		return nil
	}
	if _, err := r.Verdicts(cctx, stack, []byte(edited), "cdkbot-review-2"); err == nil {
		t.Error("a cancelled review returned verdicts")
	}
	proxy.Fault = nil
	if n := left(); n != 0 {
		t.Errorf("cancelled: %d change set(s) left", n)
	}
	// CloudFormation fails the change set (moto answers for a broken template as AWS does).
	proxy.Rewrite = func(action string, body []byte) []byte {
		if action == "DescribeChangeSet" {
			return []byte(strings.Replace(string(body), "<Status>CREATE_COMPLETE</Status>", "<Status>FAILED</Status><StatusReason>Template error: unresolved reference</StatusReason>", 1))
		}
		return body
	}
	if _, err := r.Verdicts(ctx, stack, []byte(edited), "cdkbot-review-3"); err == nil || !strings.Contains(err.Error(), "unresolved reference") {
		t.Errorf("failed change set: %v", err)
	}
	proxy.Rewrite = nil
	if n := left(); n != 0 {
		t.Errorf("failed: %d change set(s) left", n)
	}
	// No change: an empty verdict, nothing left.
	proxy.Rewrite = func(action string, body []byte) []byte {
		if action == "DescribeChangeSet" {
			return []byte(strings.Replace(string(body), "<Status>CREATE_COMPLETE</Status>", "<Status>FAILED</Status><StatusReason>The submitted information didn't contain changes.</StatusReason>", 1))
		}
		return body
	}
	if got, err := r.Verdicts(ctx, stack, []byte(template), "cdkbot-review-4"); err != nil || len(got) != 0 || left() != 0 {
		t.Errorf("no change: %v %v", got, err)
	}
	if _, err := r.Verdicts(ctx, stack, []byte(strings.Repeat(" ", maxInlineTemplate)+template), "cdkbot-review-5"); err != ErrTooLarge {
		t.Errorf("large template: %v", err)
	}
}
