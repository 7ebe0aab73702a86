package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/testutil/fakedocker"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// What was reviewed is what deploys: a pull request reviewed with the tags aspect, then merged,
// deploys the tagged templates (uploaded beside the synthesized template assets under their own
// hash), and the merge flow finds every stack as its review saw it.
func TestMutatingAspectsDeployAsReviewed(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	dir := copyDir(t, fixture(t, "aws-cdk-lib@2.276.0/deploy-graph"))
	config := filepath.Join(t.TempDir(), "cdkbot.yml")
	os.WriteFile(config, []byte("aspects:\n  - use: tags\n    with: { tags: { owner: graph-team } }\n"), 0o644)

	gh := ghserver.New(t, actionToken)
	actionEnv(t, gh, actionToken, "pull_request", prEvent(t, "opened", "h7", "b7"))
	t.Setenv("INPUT_BASE-ASSEMBLY", "")
	t.Setenv("INPUT_HEAD-ASSEMBLY", dir)
	t.Setenv("INPUT_CONFIG", config)
	code, stdout, stderr := run(t, "action")
	if code != ExitOK || len(gh.Comments[42]) != 1 {
		t.Fatalf("review: exit %d\n%s\n%s", code, stdout, stderr)
	}

	gh.Pulls[42] = &ghserver.PullRequest{Number: 42, Author: "dev", HeadSHA: "h7", HeadRef: "topic", BaseRef: "main", MergedAt: "2026-11-20T10:00:00Z"}
	gh.CommitPulls["cccccccccccccccccccccccccccccccccccccccc"] = []int{42}
	actionEnv(t, gh, actionToken, "push", pushMergeEvent(t))
	t.Setenv("INPUT_ASSEMBLY", dir)
	t.Setenv("INPUT_CONFIG", config)
	t.Setenv("INPUT_ON-UNREVIEWED", "refuse")
	code, stdout, stderr = run(t, "action")
	if code != ExitOK || strings.Contains(stdout, "not as reviewed") {
		t.Fatalf("deploy: exit %d\n%s\n%s", code, stdout, stderr)
	}
	ctx := context.Background()
	cfn := cloudformation.NewFromConfig(srv.Config())
	got, err := cfn.GetTemplate(ctx, &cloudformation.GetTemplateInput{StackName: aws.String("graph-web"), TemplateStage: cfntypes.TemplateStageOriginal})
	if err != nil || !strings.Contains(aws.ToString(got.TemplateBody), `{"Key":"owner","Value":"graph-team"}`) {
		t.Fatalf("deployed template of graph-web lacks the tag: %v\n%s", err, aws.ToString(got.TemplateBody))
	}
	// The mutated template went beside the synthesized one, under its own hash.
	key := fmt.Sprintf("%x.json", sha256.Sum256([]byte(aws.ToString(got.TemplateBody))))
	if _, err := awsconfig.S3(srv.Config()).HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("cdk-hnb659fds-assets-123456789012-us-east-1"),
		Key: &key}); err != nil {
		t.Errorf("mutated template object %s: %v", key, err)
	}
}

// An assembly the CDK CLI would refuse (an unresolved context lookup) deploys nothing and plans
// nothing: exit 2 with every reason.
func TestIncompleteAssemblyDeploysNothing(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	proxy := srv.NewProxy(t)
	moto.Env(t, proxy.URL)
	dir := writeDeployAssembly(t, "base-topic")
	raw, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(strings.Replace(string(raw), `{"artifacts"`,
		`{"missing":[{"key":"vpc-provider:account=123456789012:filter.isDefault=true:region=us-east-1","provider":"vpc-provider","props":{"account":"123456789012","region":"us-east-1"}}],"artifacts"`, 1)), 0o644)
	for _, cmd := range [][]string{{"deploy", dir}, {"plan", dir}} {
		from := len(proxy.Calls)
		code, _, stderr := run(t, cmd...)
		if code != ExitUsage || !strings.Contains(stderr, "nothing deployed: the assembly is incomplete (the CDK CLI refuses it too): context lookup vpc-provider") ||
			!strings.Contains(stderr, "commit cdk.context.json") {
			t.Errorf("%s: exit %d\n%s", cmd[0], code, stderr)
		}
		for _, c := range proxy.Calls[from:] {
			if strings.Contains(c, "ChangeSet") || strings.Contains(c, "PutObject") {
				t.Errorf("%s touched AWS: %s", cmd[0], c)
			}
		}
	}
}

// A merge whose assembly has a docker image asset publishes it from the action (docker build,
// login with the ECR token on stdin, tag, push, through the recording fake docker), then deploys.
func TestMergeWithAnImageAsset(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	calls := fakedocker.Install(t)
	// The publish fixture's parameters get names (moto cannot create nameless ones).
	dir := rewriteTemplate(t, fixture(t, "aws-cdk-lib@2.276.0/publish"), "Publish", func(raw []byte) []byte {
		var tpl map[string]any
		if err := json.Unmarshal(raw, &tpl); err != nil {
			t.Fatal(err)
		}
		for id, r := range tpl["Resources"].(map[string]any) {
			if res := r.(map[string]any); res["Type"] == "AWS::SSM::Parameter" {
				res["Properties"].(map[string]any)["Name"] = "/publish/" + id
			}
		}
		b, _ := json.MarshalIndent(tpl, "", " ")
		return b
	})
	gh := ghserver.New(t, actionToken)
	actionEnv(t, gh, actionToken, "push", pushMergeEvent(t))
	t.Setenv("INPUT_ASSEMBLY", dir)
	code, stdout, stderr := run(t, "action")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	log := strings.Join(fakedocker.Calls(t, calls), "\n")
	tag := "73b0e49e8cb91cf98a991860d150a61c38269765f5e57f24c1ccf5ed49aa850e"
	repo := "123456789012.dkr.ecr.us-east-1.amazonaws.com/cdk-hnb659fds-container-assets-123456789012-us-east-1"
	for _, want := range []string{"build --tag cdkasset-" + tag, "login --username AWS --password-stdin 123456789012.dkr.ecr.us-east-1.amazonaws.com",
		"tag cdkasset-" + tag + " " + repo + ":" + tag, "push " + repo + ":" + tag} {
		if !strings.Contains(log, want) {
			t.Errorf("docker calls lack %q:\n%s", want, log)
		}
	}
	out, err := ssm.NewFromConfig(srv.Config()).GetParameter(context.Background(), &ssm.GetParameterInput{Name: aws.String("/publish/ImageUri")})
	if err != nil || aws.ToString(out.Parameter.Value) != repo+":"+tag {
		t.Errorf("the stack's image URI parameter: %v %v", out, err)
	}
}
