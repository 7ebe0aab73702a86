package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

type deployJSON struct {
	Stacks []struct {
		Stack, StackName, Result, Status string
		Outputs                          map[string]string
		APICalls                         int
	}
	Failed bool
}

// End to end on real assemblies: the deploy-graph app (twelve stacks, a file asset, outputs)
// synthesized by aws-cdk-lib 2.276.0 (modern: bootstrap roles, asset
// manifest) and by @aws-cdk/core 1.204.0 (legacy: asset parameters, the toolkit bucket),
// each into moto with the real bootstrap stack: publish, then every stack CREATE_COMPLETE in
// dependency order with its resources in moto; deployed again, nothing changes and no change
// set is created; a modified template updates its stack alone.
func TestDeployGraphEndToEnd(t *testing.T) {
	for _, version := range []string{"aws-cdk-lib@2.276.0", "aws-cdk-core@1.204.0"} {
		t.Run(version, func(t *testing.T) {
			srv := moto.Start(t)
			srv.Bootstrap(t)
			proxy := srv.NewProxy(t)
			moto.Env(t, proxy.URL)
			dir := fixture(t, version+"/deploy-graph")

			code, stdout, stderr := run(t, "deploy", dir, "--format", "json", "--revision", "0123abc", "--concurrency", "4", "--timeout", "20s")
			var rep deployJSON
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != ExitOK || len(rep.Stacks) != 12 {
				t.Fatalf("deploy: exit %d %v\n%s\n%s", code, err, stdout, stderr)
			}
			calls := 0
			for _, s := range rep.Stacks {
				if s.Result != "deployed" || s.Status != "CREATE_COMPLETE" {
					t.Errorf("%s: %s %s", s.Stack, s.Result, s.Status)
				}
				calls += s.APICalls
			}
			t.Logf("first deploy: %d CloudFormation/SSM calls for 12 stacks", calls)
			// Dependencies first: Api deployed before Web started.
			api, web := "Api", "Web" // artifact ids; v1 names artifacts by stack name
			if strings.HasPrefix(version, "aws-cdk-core@") {
				api, web = "graph-api", "graph-web"
			}
			if i, j := strings.Index(stderr, "] "+api+": deployed"), strings.Index(stderr, web+": deploying"); i < 0 || j < i {
				t.Errorf("order:\n%s", stderr)
			}
			ctx := context.Background()
			param := func(name string) string {
				out, err := ssm.NewFromConfig(srv.Config()).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
				if err != nil {
					return err.Error()
				}
				return aws.ToString(out.Parameter.Value)
			}
			if got := param("/graph/web"); got != "arn:aws:sns:us-east-1:123456789012:graph-web" {
				t.Errorf("/graph/web: %s", got)
			}
			url := param("/graph/svc3") // the published asset's s3:// URL
			bucket, key, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
			if _, err := awsconfig.S3(srv.Config()).HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key}); err != nil {
				t.Errorf("asset %s not published: %v", url, err)
			}

			from := len(proxy.Calls)
			code, stdout, _ = run(t, "deploy", dir, "--format", "json", "--revision", "4567def")
			rep = deployJSON{}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != ExitOK {
				t.Fatalf("again: exit %d %v\n%s", code, err, stdout)
			}
			calls = 0
			for _, s := range rep.Stacks {
				if s.Result != "no changes" {
					t.Errorf("again %s: %s", s.Stack, s.Result)
				}
				calls += s.APICalls
			}
			for _, c := range proxy.Calls[from:] {
				if strings.Contains(c, "ChangeSet") {
					t.Errorf("no change set expected: %s", c)
				}
			}
			t.Logf("second deploy: %d CloudFormation/SSM calls for 12 unchanged stacks", calls)

			// A modified assembly: Web's parameter renamed (a replacement) updates Web alone.
			changed := copyDir(t, dir)
			tpls, _ := filepath.Glob(filepath.Join(changed, "*eb.template.json"))
			if len(tpls) != 1 {
				t.Fatalf("Web's template: %v", tpls)
			}
			raw, _ := os.ReadFile(tpls[0])
			edited := []byte(strings.Replace(string(raw), `"Name": "/graph/web"`, `"Name": "/graph/web-v2"`, 1))
			os.WriteFile(tpls[0], edited, 0o644)
			// As a synth would: the template asset is content-addressed, so its new hash replaces
			// the old one in the asset manifest and the stack's template URL.
			before, after := sha256.Sum256(raw), sha256.Sum256(edited)
			for _, f := range []string{"manifest.json", "Web.assets.json"} {
				if b, err := os.ReadFile(filepath.Join(changed, f)); err == nil {
					os.WriteFile(filepath.Join(changed, f), []byte(strings.ReplaceAll(string(b), hex.EncodeToString(before[:]), hex.EncodeToString(after[:]))), 0o644)
				}
			}
			code, stdout, _ = run(t, "deploy", changed, "--format", "json", "--revision", "89abcde")
			rep = deployJSON{}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != ExitOK {
				t.Fatalf("modified: exit %d %v\n%s", code, err, stdout)
			}
			for _, s := range rep.Stacks {
				want := "no changes"
				if s.Stack == web {
					want = "deployed"
				}
				if s.Result != want || (s.Stack == web && s.Status != "UPDATE_COMPLETE") {
					t.Errorf("modified %s: %s %s", s.Stack, s.Result, s.Status)
				}
			}
			if got := param("/graph/web-v2"); got != "arn:aws:sns:us-east-1:123456789012:graph-web" {
				t.Errorf("after the update /graph/web-v2 is %s", got)
			}
		})
	}
}

// A stack whose resource moto rejects fails with the reason shown; the stacks that depend on
// it are skipped; the independent ones deploy.
func TestDeployGraphFailureSkipsOnlyDependents(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	dir := copyDir(t, fixture(t, "aws-cdk-lib@2.276.0/deploy-graph"))
	tpl := filepath.Join(dir, "Svc3.template.json")
	raw, _ := os.ReadFile(tpl)
	os.WriteFile(tpl, []byte(strings.Replace(string(raw), `"TopicName": "graph-svc3"`, `"TopicName": "not a valid name!"`, 1)), 0o644)

	code, stdout, stderr := run(t, "deploy", dir, "--format", "json")
	var rep deployJSON
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != ExitFailure || !rep.Failed {
		t.Fatalf("exit %d %v\n%s\n%s", code, err, stdout, stderr)
	}
	got := map[string]string{}
	for _, s := range rep.Stacks {
		got[s.Stack] = s.Result
	}
	want := map[string]string{"Network": "deployed", "Dns": "deployed", "Data": "deployed", "Queue": "deployed", "Auth": "deployed",
		"Svc1": "deployed", "Svc2": "deployed", "Svc3": "failed", "Svc4": "deployed", "Svc5": "deployed", "Api": "skipped", "Web": "skipped"}
	for id, r := range want {
		if got[id] != r {
			t.Errorf("%s: %s, want %s", id, got[id], r)
		}
	}
	if !strings.Contains(stdout, "Topic names must be made up of only uppercase and lowercase ASCII letters") ||
		!strings.Contains(stdout, `"reason": "depends on Svc3, which did not deploy"`) || !strings.Contains(stdout, `"reason": "depends on Api, which did not deploy"`) {
		t.Errorf("reasons:\n%s", stdout)
	}
}
