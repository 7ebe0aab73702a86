package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// writeBoundAssembly is writeDeployAssembly with a file asset for App (its code, zipped).
func writeBoundAssembly(t *testing.T) string {
	t.Helper()
	dir := writeDeployAssembly(t, "bound-topic")
	if err := os.MkdirAll(filepath.Join(dir, "asset.abc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "asset.abc", "index.js"), []byte("exports.handler = () => 'reviewed'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeJSONFile(t, filepath.Join(dir, "App.assets.json"), map[string]any{"version": "36.0.0", "files": map[string]any{
		"abc": map[string]any{"source": map[string]any{"path": "asset.abc", "packaging": "zip"},
			"destinations": map[string]any{"123456789012-us-east-1": map[string]any{
				"bucketName": "cdk-hnb659fds-assets-123456789012-us-east-1", "objectKey": "abc.zip", "region": "us-east-1",
				"assumeRoleArn": "arn:${AWS::Partition}:iam::123456789012:role/cdk-hnb659fds-file-publishing-role-123456789012-us-east-1"}}}}})
	editManifest(t, dir, func(arts map[string]any) {
		arts["App.assets"] = map[string]any{"type": "cdk:asset-manifest", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"file": "App.assets.json"}}
		arts["App"].(map[string]any)["dependencies"] = []string{"Base", "App.assets"}
	})
	return dir
}

func editManifest(t *testing.T, dir string, edit func(arts map[string]any)) {
	t.Helper()
	var manifest map[string]any
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil || json.Unmarshal(raw, &manifest) != nil {
		t.Fatalf("manifest: %v", err)
	}
	edit(manifest["artifacts"].(map[string]any))
	writeJSONFile(t, filepath.Join(dir, "manifest.json"), manifest)
}

func appProps(arts map[string]any) map[string]any {
	return arts["App"].(map[string]any)["properties"].(map[string]any)
}

// mergedWithReview is the GitHub test server for a push that merged pull request #7, on which
// cdkbot's review (marker) is posted, with the action's environment set for that push and the
// assembly dir to deploy.
func mergedWithReview(t *testing.T, dir, marker string) *ghserver.Server {
	t.Helper()
	gh := ghserver.NewWith(t, ghserver.Options{Tokens: map[string]ghserver.Identity{appToken: ghserver.AppToken}})
	gh.Pulls[7] = mergedPR(7, "h7")
	gh.CommitPulls["cccccccccccccccccccccccccccccccccccccccc"] = []int{7}
	if marker != "" {
		gh.Add(7, "cdk-deployer[bot]", marker)
	}
	actionEnv(t, gh, appToken, "push", pushMergeEvent(t))
	t.Setenv("INPUT_ASSEMBLY", dir)
	return gh
}

// The merge deploy deploys only what the merged pull request's review showed: an assembly that
// keeps the reviewed template but changes anything else CloudFormation acts on — the stack it
// lands on above all — is refused, naming the stack and what differs, whatever on-unreviewed
// says; the stack it would have overwritten keeps its resources.
func TestMergeDeployIsBoundToTheReview(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)

	// The stack an attacker aims at: deployed by someone else, with data in it.
	victim := writeDeployAssembly(t, "victim-topic")
	editManifest(t, victim, func(arts map[string]any) {
		delete(arts, "App")
		arts["Base"].(map[string]any)["properties"].(map[string]any)["stackName"] = "Victim"
	})
	writeJSONFile(t, filepath.Join(victim, "Base.template.json"), map[string]any{"Resources": map[string]any{
		"Table": map[string]any{"Type": "AWS::DynamoDB::Table", "Properties": map[string]any{
			"KeySchema":            []any{map[string]any{"AttributeName": "id", "KeyType": "HASH"}},
			"AttributeDefinitions": []any{map[string]any{"AttributeName": "id", "AttributeType": "S"}},
			"BillingMode":          "PAY_PER_REQUEST"}}}})
	if code, stdout, stderr := run(t, "deploy", victim); code != ExitOK {
		t.Fatalf("victim: exit %d\n%s\n%s", code, stdout, stderr)
	}
	cfn := cloudformation.NewFromConfig(srv.Config())
	victimResources := func() []string {
		out, err := cfn.DescribeStackResources(context.Background(), &cloudformation.DescribeStackResourcesInput{
			StackName: ptr("Victim")})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range out.StackResources {
			ids = append(ids, *r.LogicalResourceId)
		}
		return ids
	}

	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   string
	}{
		{"the stack it lands on", func(t *testing.T, dir string) {
			editManifest(t, dir, func(arts map[string]any) { appProps(arts)["stackName"] = "Victim" })
		}, "App: stack name differs from the review of #7 at h7"},
		{"its parameters", func(t *testing.T, dir string) {
			editManifest(t, dir, func(arts map[string]any) { appProps(arts)["parameters"] = map[string]any{"Admin": "mallory"} })
		}, "App: parameters differs"},
		{"its tags", func(t *testing.T, dir string) {
			editManifest(t, dir, func(arts map[string]any) { appProps(arts)["tags"] = map[string]any{"cost-center": "x"} })
		}, "App: tags differs"},
		{"its termination protection", func(t *testing.T, dir string) {
			editManifest(t, dir, func(arts map[string]any) { appProps(arts)["terminationProtection"] = true })
		}, "App: termination protection differs"},
		{"its notifications", func(t *testing.T, dir string) {
			editManifest(t, dir, func(arts map[string]any) {
				appProps(arts)["notificationArns"] = []string{"arn:aws:sns:us-east-1:999999999999:exfiltrate"}
			})
		}, "App: notification ARNs differs"},
		{"its execution role", func(t *testing.T, dir string) {
			editManifest(t, dir, func(arts map[string]any) {
				appProps(arts)["cloudFormationExecutionRoleArn"] = "arn:aws:iam::123456789012:role/admin"
			})
		}, "App: roles differs"},
		{"its asset's content, under the reviewed hash", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "asset.abc", "index.js"), []byte("exports.handler = () => 'other'\n"),
				0o644); err != nil {
				t.Fatal(err)
			}
		}, "App: assets differs"},
		{"two things at once", func(t *testing.T, dir string) {
			editManifest(t, dir, func(arts map[string]any) {
				appProps(arts)["stackName"] = "Victim"
				appProps(arts)["terminationProtection"] = true
			})
		}, "App: stack name, termination protection differ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeBoundAssembly(t)
			gh := ghserver.NewWith(t, ghserver.Options{Tokens: map[string]ghserver.Identity{appToken: ghserver.AppToken}})
			gh.Pulls[7] = mergedPR(7, "h7")
			gh.CommitPulls["cccccccccccccccccccccccccccccccccccccccc"] = []int{7}
			gh.Add(7, "cdk-deployer[bot]", reviewMarker(t, dir, "h7"))
			tc.tamper(t, dir)
			actionEnv(t, gh, appToken, "push", pushMergeEvent(t))
			t.Setenv("INPUT_ASSEMBLY", dir)
			for _, onUnreviewed := range []string{"refuse", "warn"} {
				t.Setenv("INPUT_ON-UNREVIEWED", onUnreviewed)
				code, stdout, stderr := run(t, "action")
				if code != ExitVerdict || !strings.Contains(stdout, "::warning::cdkbot: not as reviewed: "+tc.want) ||
					!strings.Contains(stdout, "nothing deployed") || strings.Contains(stdout+stderr, "::group::cdkbot: [") {
					t.Errorf("on-unreviewed %s: exit %d\n%s\n%s", onUnreviewed, code, stdout, stderr)
				}
				if len(gh.Deployments) != 0 {
					t.Errorf("on-unreviewed %s: a deployment was opened: %+v", onUnreviewed, gh.Deployments)
				}
			}
			if got := victimResources(); strings.Join(got, ",") != "Table" {
				t.Errorf("Victim's resources are now %v", got)
			}
		})
	}

	// Untouched, the same assembly deploys: the comparison is not what refused it.
	dir := writeBoundAssembly(t)
	mergedWithReview(t, dir, reviewMarker(t, dir, "h7"))
	t.Setenv("INPUT_ON-UNREVIEWED", "refuse")
	if code, stdout, stderr := run(t, "action"); code != ExitOK || strings.Contains(stdout, "not as reviewed") {
		t.Errorf("as reviewed: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func ptr[T any](v T) *T { return &v }

// reviewedChange is the marker cdkbot's review of base → head (assembly directories) posts.
func reviewedChange(t *testing.T, base, head, key, sha string, gates []review.Gate) string {
	t.Helper()
	load := func(dir string) *assembly.Assembly {
		a, err := pipeline.LoadAssembly(dir)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	rep, err := review.Run(review.Input{Base: load(base), Head: load(head), Key: key, HeadSHA: sha, FailOn: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	rep.Gates = append(rep.Gates, gates...)
	return render.MarkerComment(rep) + "\n### cdkbot review"
}

// A change merged and refused (or never deployed) stays on main; the next pull request is
// reviewed against main and shows only its own change. Its deploy would also make the first
// change, which nobody approved: a stack that does not run the base its review compared with is
// refused, and keeps what it runs.
func TestMergeDeployRefusesWhatItsReviewDidNotCompareWith(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	running := writeDeployAssembly(t, "rides-topic") // App runs its queue
	if code, stdout, stderr := run(t, "deploy", running); code != ExitOK {
		t.Fatalf("deploy what runs: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// main since: App lost its queue (a merge whose deploy was refused) ...
	mainNow := writeDeployAssembly(t, "rides-topic")
	writeJSONFile(t, filepath.Join(mainNow, "App.template.json"), map[string]any{"Resources": map[string]any{
		"Marker": map[string]any{"Type": "AWS::SNS::Topic", "Properties": map[string]any{"TopicName": "app-marker"}}}})
	// ... and the next pull request adds a topic to that: its review shows the topic alone.
	head := writeDeployAssembly(t, "rides-topic")
	writeJSONFile(t, filepath.Join(head, "App.template.json"), map[string]any{"Resources": map[string]any{
		"Marker": map[string]any{"Type": "AWS::SNS::Topic", "Properties": map[string]any{"TopicName": "app-marker"}},
		"Topic2": map[string]any{"Type": "AWS::SNS::Topic", "Properties": map[string]any{"TopicName": "app-topic2"}}}})

	mergedWithReview(t, head, reviewedChange(t, mainNow, head, "cdk/review/.", "h7", nil))
	code, stdout, stderr := run(t, "action")
	if code == ExitOK || !strings.Contains(stdout+stderr, "runs a template other than the base its review compared with") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	out, err := cloudformation.NewFromConfig(srv.Config()).DescribeStackResources(context.Background(),
		&cloudformation.DescribeStackResourcesInput{StackName: ptr("App")})
	if err != nil || len(out.StackResources) != 1 || *out.StackResources[0].LogicalResourceId != "Queue" {
		t.Errorf("App lost what it ran: %+v %v", out, err)
	}

	// Once main's change is deployed, the same merge deploys.
	if code, stdout, stderr := run(t, "deploy", mainNow); code != ExitOK {
		t.Fatalf("deploy main: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "action"); code != ExitOK {
		t.Errorf("after main deployed: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// Every review on the merged pull request holds, whatever its key: a review that blocked is not
// outvoted by another job's review recording the same stacks; a fork's review, which cdkbot
// cannot verify, binds as a refusal, whatever on-unreviewed says; and when cdkbot cannot read
// which pull requests a push merged, nothing deploys.
func TestMergeDeployFailsClosed(t *testing.T) {
	dir := writeBoundAssembly(t)
	blocking := []review.Gate{{Name: review.GateDestroy, Triggered: true, Enforced: true, Items: []string{"Table in App"}}}
	for _, c := range []struct {
		name  string
		setup func(gh *ghserver.Server)
		want  string
	}{
		{"another job's review does not outvote a blocking one", func(gh *ghserver.Server) {
			gh.Add(7, "cdk-deployer[bot]", reviewedChange(t, dir, dir, "cdk/review/a", "h7", blocking))
			gh.Add(7, "cdk-deployer[bot]", reviewedChange(t, dir, dir, "cdk/review/b", "h7", nil))
		}, "#7's review blocked this change"},
		{"a fork's review binds under on-unreviewed: warn", func(gh *ghserver.Server) {
			var fork bytes.Buffer
			raw, _ := json.Marshal(map[string]any{"gates": []any{}, "diff": map[string]any{"stacks": []any{}}})
			if err := render.ForkReviewMarkdown(&fork, raw, "cdk/review/.", "h7", 0); err != nil {
				t.Fatal(err)
			}
			gh.Add(7, "cdk-deployer[bot]", fork.String())
		}, "#7 was reviewed in a fork's workflow"},
		{"the merged pull requests cannot be read", func(gh *ghserver.Server) {
			gh.Add(7, "cdk-deployer[bot]", reviewedChange(t, dir, dir, "cdk/review/.", "h7", nil))
			path := "GET /repos/acme/shop/commits/cccccccccccccccccccccccccccccccccccccccc/pulls"
			for range 10 {
				gh.Fail[path] = append(gh.Fail[path], ghserver.Response{Status: 502})
			}
		}, "could not read which pull requests"},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := ghserver.NewWith(t, ghserver.Options{Tokens: map[string]ghserver.Identity{appToken: ghserver.AppToken}})
			gh.Pulls[7] = mergedPR(7, "h7")
			gh.CommitPulls["cccccccccccccccccccccccccccccccccccccccc"] = []int{7}
			c.setup(gh)
			actionEnv(t, gh, appToken, "push", pushMergeEvent(t))
			t.Setenv("INPUT_ASSEMBLY", dir)
			t.Setenv("INPUT_ON-UNREVIEWED", "warn")
			code, stdout, stderr := run(t, "action")
			if code != ExitVerdict || !strings.Contains(stdout, c.want) || !strings.Contains(stdout, "nothing deployed") {
				t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}
