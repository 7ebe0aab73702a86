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
			// Cross-stack references, two levels deep: Network's topic imported by Data and
			// Queue, Data's by Svc1 and Svc2, each resolved from the exporter's outputs.
			for param_, want := range map[string]string{"/graph/data/upstream": "graph-network", "/graph/queue/upstream": "graph-network",
				"/graph/svc1/upstream": "graph-data", "/graph/svc2/upstream": "graph-data"} {
				if got := param(param_); got != "arn:aws:sns:us-east-1:123456789012:"+want {
					t.Errorf("%s: %s, want the %s topic", param_, got, want)
				}
			}
			for _, s := range rep.Stacks {
				if s.Outputs["TopicArn"] != "arn:aws:sns:us-east-1:123456789012:"+s.StackName {
					t.Errorf("%s outputs (from DescribeStacks): %v", s.Stack, s.Outputs)
				}
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

			// Modified assemblies: Web's parameter renamed (a replacement), then the exporting
			// Data stack's own parameter renamed, each updates its stack alone; both without
			// --revision, so every run names its change sets cdkbot-deploy, as a user would.
			data := "Data"
			if strings.HasPrefix(version, "aws-cdk-core@") {
				data = "graph-data"
			}
			changed := editTemplate(t, dir, web, `"Name": "/graph/web"`, `"Name": "/graph/web-v2"`)
			changed = editTemplate(t, changed, data, `"Name": "/graph/data"`, `"Name": "/graph/data-v2"`)
			for i, c := range []struct{ dir, stack string }{{editTemplate(t, dir, web, `"Name": "/graph/web"`, `"Name": "/graph/web-v2"`), web}, {changed, data}} {
				code, stdout, stderr = run(t, "deploy", c.dir, "--format", "json")
				rep = deployJSON{}
				if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != ExitOK {
					t.Fatalf("modified %d: exit %d %v\n%s\n%s", i, code, err, stdout, stderr)
				}
				for _, s := range rep.Stacks {
					want := "no changes"
					if s.Stack == c.stack {
						want = "deployed"
					}
					if s.Result != want || (s.Stack == c.stack && s.Status != "UPDATE_COMPLETE") {
						t.Errorf("modified %d %s: %s %s", i, s.Stack, s.Result, s.Status)
					}
				}
			}
			if got := param("/graph/web-v2"); got != "arn:aws:sns:us-east-1:123456789012:graph-web" {
				t.Errorf("after the update /graph/web-v2 is %s", got)
			}
			if got := param("/graph/svc1/upstream"); got != "arn:aws:sns:us-east-1:123456789012:graph-data" {
				t.Errorf("after the exporter's update Svc1 imports %s", got)
			}
		})
	}
}

// editTemplate copies an assembly and replaces old with new in the template of the stack with
// artifact id, as a synth would: the template asset is content-addressed, so its new hash
// replaces the old one in the asset manifests and the stack's template URL.
func editTemplate(t *testing.T, dir, id, old, new string) string {
	t.Helper()
	return rewriteTemplate(t, dir, id, func(raw []byte) []byte {
		if !strings.Contains(string(raw), old) {
			t.Fatalf("template of %s lacks %q", id, old)
		}
		return []byte(strings.Replace(string(raw), old, new, 1))
	})
}

// rewriteTemplate copies an assembly with the template of stack id rewritten by edit, its new
// content hash put wherever the old one stood (asset manifests, the template URL).
func rewriteTemplate(t *testing.T, dir, id string, edit func([]byte) []byte) string {
	t.Helper()
	changed := copyDir(t, dir)
	path := ""
	filepath.WalkDir(changed, func(p string, d os.DirEntry, err error) error {
		if err == nil && filepath.Base(p) == id+".template.json" {
			path = p
		}
		return nil
	})
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("template of %s: %v", id, err)
	}
	edited := edit(raw)
	os.WriteFile(path, edited, 0o644)
	before, after := sha256.Sum256(raw), sha256.Sum256(edited)
	files, _ := filepath.Glob(filepath.Join(changed, "*.json"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			os.WriteFile(f, []byte(strings.ReplaceAll(string(b), hex.EncodeToString(before[:]), hex.EncodeToString(after[:]))), 0o644)
		}
	}
	return changed
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
