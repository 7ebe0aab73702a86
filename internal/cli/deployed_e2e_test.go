package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// deployedGraph starts the emulator with the real bootstrap stack, points the AWS environment at
// it through a proxy, and deploys the deploy-graph app (aws-cdk-lib 2.276.0) with cdkbot.
func deployedGraph(t *testing.T) (*moto.Server, *moto.Proxy, string) {
	t.Helper()
	srv := moto.Start(t)
	srv.Bootstrap(t)
	proxy := srv.NewProxy(t)
	moto.Env(t, proxy.URL)
	dir := fixture(t, "aws-cdk-lib@2.276.0/deploy-graph")
	if code, _, stderr := run(t, "deploy", dir, "--revision", "0123abc", "--concurrency", "4", "--timeout", "20s"); code != ExitOK {
		t.Fatalf("deploy: exit %d\n%s", code, stderr)
	}
	return srv, proxy, dir
}

// Against the emulator with the real bootstrap stack: the deploy-graph app deployed by cdkbot,
// then reviewed with credentials. What runs is the base: nothing is said. Changed outside
// cdkbot (an UpdateStack of its own) or deleted: the review says so, with the diff from what
// runs to the base. Only reads are sent, through the lookup role.
func TestReviewComparesWithWhatIsDeployed(t *testing.T) {
	srv, proxy, dir := deployedGraph(t)
	review := func(args ...string) (int, string, string) {
		t.Helper()
		return run(t, append([]string{"review", "--base-assembly", dir, "--head-assembly", dir, "--no-color"}, args...)...)
	}
	states := func(stdout string) map[string]string {
		t.Helper()
		var rep struct {
			Deployed []struct{ Stack, State string }
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		out := map[string]string{}
		for _, d := range rep.Deployed {
			out[d.Stack] = d.State
		}
		return out
	}

	proxy.Calls = nil
	code, stdout, stderr := review("--deployed", "required", "--format", "json")
	got := states(stdout)
	if code != ExitOK || len(got) != 12 || got["Web"] != "same" || got["Network"] != "same" {
		t.Fatalf("as deployed: exit %d %v\n%s", code, got, stderr)
	}
	for _, c := range proxy.Calls {
		if !strings.Contains(c, "DescribeStacks") && !strings.Contains(c, "GetTemplate") && !strings.Contains(c, "AssumeRole") &&
			!strings.Contains(c, "GetCallerIdentity") && !strings.Contains(c, "DescribeStackResources") {
			t.Errorf("the review sent more than reads: %s", c)
		}
	}
	if n := strings.Count(strings.Join(proxy.Calls, "\n"), "AssumeRole"); n != 1 {
		t.Errorf("the lookup role was assumed %d times, want once", n)
	}

	// Out of band: the console edits Web's parameter, and Dns is deleted.
	ctx := context.Background()
	cfnc := cloudformation.NewFromConfig(srv.Config())
	tpl, err := os.ReadFile(dir + "/Web.template.json")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(tpl), `"Name": "/graph/web"`, `"Name": "/graph/web-console-edit"`, 1)
	if _, err := cfnc.UpdateStack(ctx, &cloudformation.UpdateStackInput{StackName: aws.String("graph-web"), TemplateBody: aws.String(edited),
		Capabilities: []cfntypes.Capability{cfntypes.CapabilityCapabilityIam}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfnc.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String("graph-dns")}); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = review("--format", "json") // auto: the credentials are configured
	if got := states(stdout); code != ExitOK || got["Web"] != "differs" || got["Dns"] != "not-deployed" || got["Api"] != "same" {
		t.Errorf("after the edits: exit %d %v", code, got)
	}
	_, stdout, _ = review("--format", "markdown")
	for _, want := range []string{"#### What runs", "<code>Web</code> runs something other than the base", "/graph/web-console-edit", "Not deployed yet: <code>Dns</code>."} {
		if !strings.Contains(stdout, want) {
			t.Errorf("markdown lacks %q:\n%s", want, stdout)
		}
	}
	_, stdout, _ = review()
	if !strings.Contains(stdout, "deployed: Web runs something other than the base") || !strings.Contains(stdout, "deployed: Dns is not deployed yet") {
		t.Errorf("text:\n%s", stdout)
	}
	proxy.Calls = nil
	if code, stdout, _ := review("--deployed", "off", "--format", "json"); code != ExitOK || len(states(stdout)) != 0 || len(proxy.Calls) != 0 {
		t.Errorf("off: exit %d, %d calls", code, len(proxy.Calls))
	}
}

// required fails closed when nothing can be read; auto without credentials says nothing.
func TestDeployedRequiredFailsWithoutCredentials(t *testing.T) {
	dir := fixture(t, "aws-cdk-lib@2.276.0/deploy-graph")
	home := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_SESSION_TOKEN"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	t.Setenv("AWS_CONFIG_FILE", home+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", home+"/none")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9") // never reached: nothing may leave the machine
	if code, stdout, _ := run(t, "review", "--base-assembly", dir, "--head-assembly", dir, "--format", "json"); code != ExitOK || strings.Contains(stdout, `"deployed"`) {
		t.Errorf("auto without credentials: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run(t, "review", "--base-assembly", dir, "--head-assembly", dir, "--deployed", "required"); code != ExitFailure || !strings.Contains(stderr, "--deployed required") {
		t.Errorf("required without credentials: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := run(t, "review", "--base-assembly", dir, "--head-assembly", dir, "--deployed", "sometimes"); code != ExitUsage || !strings.Contains(stderr, "use auto") {
		t.Errorf("bad mode: exit %d\n%s", code, stderr)
	}
}

// With credentials, the stacks the change touches get CloudFormation's own verdict from a change
// set (the launcher gives moto's change sets their Replacement, as AWS does): where it agrees
// the review says so, where it differs CloudFormation's wins and the review says so, where it
// cannot be asked the specification's stands with a note. No change set is left behind.
func TestReviewTakesCloudFormationsVerdict(t *testing.T) {
	srv, proxy, base := deployedGraph(t)
	head := editTemplate(t, base, "Web", `"Name": "/graph/web"`, `"Name": "/graph/web-v2"`)
	head = editTemplate(t, head, "Web", `"TopicName": "graph-web"`, `"TopicName": "graph-web", "DisplayName": "Web"`)
	type resource struct {
		LogicalID, Impact, CloudFormationReplacement, SpecificationImpact string
	}
	review := func(args ...string) (int, map[string]resource, string) {
		t.Helper()
		code, stdout, stderr := run(t, append([]string{"review", "--base-assembly", base, "--head-assembly", head, "--format", "json",
			"--deployed", "required", "--fail-on", "replace", "--head-sha", "feedc0ffee0123456789"}, args...)...)
		var rep struct {
			Notes []string
			Diff  struct {
				Stacks []struct {
					ID        string
					Resources []resource
				}
			}
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
		}
		got := map[string]resource{}
		for _, s := range rep.Diff.Stacks {
			for _, r := range s.Resources {
				got[s.ID+"/"+r.LogicalID] = r
			}
		}
		return code, got, strings.Join(rep.Notes, "\n") + stderr
	}
	leftovers := func() int {
		t.Helper()
		out, err := cloudformation.NewFromConfig(srv.Config()).ListChangeSets(context.Background(), &cloudformation.ListChangeSetsInput{StackName: aws.String("graph-web")})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Summaries)
	}

	proxy.Calls = nil
	code, got, log := review()
	if code != ExitVerdict || got["Web/Param"].Impact != "replace" || got["Web/Param"].CloudFormationReplacement != "True" ||
		got["Web/Topic"].Impact != "update" || got["Web/Topic"].CloudFormationReplacement != "False" || got["Web/Param"].SpecificationImpact != "" {
		t.Errorf("agreeing verdicts: exit %d %+v\n%s", code, got, log)
	}
	if n := leftovers(); n != 0 {
		t.Errorf("%d change set(s) left behind", n)
	}
	if !strings.Contains(strings.Join(proxy.Calls, "\n"), "CreateChangeSet") || strings.Contains(strings.Join(proxy.Calls, "\n"), "ExecuteChangeSet") {
		t.Errorf("calls: %v", proxy.Calls)
	}

	// CloudFormation says the parameter's new name does not replace it: its word wins.
	proxy.Rewrite = func(action string, body []byte) []byte {
		if action != "DescribeChangeSet" {
			return body
		}
		return []byte(strings.ReplaceAll(string(body), "<Replacement>True</Replacement>", "<Replacement>False</Replacement>"))
	}
	code, got, log = review()
	if code != ExitOK || got["Web/Param"].Impact != "update" || got["Web/Param"].SpecificationImpact != "replace" {
		t.Errorf("disagreeing verdict: exit %d %+v\n%s", code, got["Web/Param"], log)
	}
	_, stdout, _ := run(t, "review", "--base-assembly", base, "--head-assembly", head, "--deployed", "required", "--no-color")
	if !strings.Contains(stdout, "CloudFormation's change set says update; the resource specification said replace") {
		t.Errorf("text:\n%s", stdout)
	}
	proxy.Rewrite = nil

	// The deploy role may not create change sets: the specification's verdicts, and a note.
	proxy.Fault = func(r *http.Request, body []byte, _ int) *moto.Fault {
		if strings.Contains(string(body), "Action=CreateChangeSet") {
			return &moto.Fault{Status: 403, Code: "AccessDenied", Message: "not allowed to cloudformation:CreateChangeSet"}
		}
		return nil
	}
	code, got, log = review()
	if code != ExitVerdict || got["Web/Param"].Impact != "replace" || got["Web/Param"].CloudFormationReplacement != "" ||
		!strings.Contains(log, "CloudFormation could not be asked what deploying Web does") || !strings.Contains(log, "AccessDenied") {
		t.Errorf("denied: exit %d %+v\n%s", code, got["Web/Param"], log)
	}
	proxy.Fault = nil
	if n := leftovers(); n != 0 {
		t.Errorf("%d change set(s) left behind", n)
	}

	// Someone edits the parameter in the console: drift, listed, and a gate when asked for.
	if _, err := ssm.NewFromConfig(srv.Config()).PutParameter(context.Background(), &ssm.PutParameterInput{Name: aws.String("/graph/web"),
		Value: aws.String("edited-by-hand"), Overwrite: aws.Bool(true), Type: ssmtypes.ParameterTypeString}); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "review", "--base-assembly", base, "--head-assembly", head, "--deployed", "required", "--no-color", "--fail-on", "drift")
	if code != ExitVerdict || !strings.Contains(stdout, "✗ gate drift blocks: Param in Web: changed outside CloudFormation (/Value)") ||
		!strings.Contains(stdout, "/Value: stack set arn:aws:sns:us-east-1:123456789012:graph-web, is now edited-by-hand") {
		t.Errorf("drift: exit %d\n%s\n%s", code, stdout, stderr)
	}
	_, stdout, _ = run(t, "review", "--base-assembly", base, "--head-assembly", head, "--deployed", "required", "--format", "markdown")
	if !strings.Contains(stdout, "#### Drift") || !strings.Contains(stdout, "<code>edited-by-hand</code>") {
		t.Errorf("drift markdown:\n%s", stdout)
	}
	// Drift is checked only where the change deploys: reviewing no change asks nothing.
	proxy.Calls = nil
	run(t, "review", "--base-assembly", base, "--head-assembly", base, "--deployed", "required")
	if strings.Contains(strings.Join(proxy.Calls, "\n"), "DetectStackDrift") {
		t.Error("drift detection ran for an unchanged stack")
	}
}
