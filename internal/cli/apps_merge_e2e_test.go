package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// writeDeployableApp writes app's cdk.json and an assembly of one bootstrapped stack (named after
// the app) holding one queue per name, deployable into moto.
func writeDeployableApp(t *testing.T, repo, app string, queues ...string) {
	t.Helper()
	dir := filepath.Join(repo, filepath.FromSlash(app))
	out := filepath.Join(dir, "cdk.out")
	os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cdk.json"), []byte(`{"app":"node app.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stack := strings.ReplaceAll(strings.Title(strings.ReplaceAll(app, "/", " ")), " ", "") //nolint:staticcheck // ASCII names
	role := "arn:${AWS::Partition}:iam::123456789012:role/cdk-hnb659fds-%s-role-123456789012-us-east-1"
	writeJSONTB(t, filepath.Join(out, "manifest.json"), map[string]any{"version": "36.0.0", "artifacts": map[string]any{
		stack: map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"templateFile": stack + ".template.json",
				"assumeRoleArn":                     strings.Replace(role, "%s", "deploy", 1),
				"cloudFormationExecutionRoleArn":    strings.Replace(role, "%s-role", "cfn-exec-role", 1),
				"requiresBootstrapStackVersion":     6,
				"bootstrapStackVersionSsmParameter": "/cdk-bootstrap/hnb659fds/version"}}}})
	res := map[string]any{}
	for _, q := range queues {
		res[q] = map[string]any{"Type": "AWS::SQS::Queue", "Properties": map[string]any{"QueueName": q}}
	}
	writeJSONTB(t, filepath.Join(out, stack+".template.json"), map[string]any{"Resources": res})
}

// pushEvent is a real push payload to main whose one commit is after.
func pushEvent(t *testing.T, after string) string {
	return realEvent(t, "push", "", func(p map[string]any) {
		p["ref"], p["after"] = "refs/heads/main", after
		set(p, "repository.default_branch", "main")
		p["commits"] = []any{map[string]any{"id": after, "message": "Merge pull request #42", "distinct": true}}
	})
}

// The deploy side of a monorepo, end to end through the GitHub test server and moto: a pull
// request touching two apps is reviewed fanned out (two legs, comments off) and fanned back into
// ONE comment recording each leg's review; it is merged, and the merge commit changes the users
// app beyond what its leg reviewed. The deploy fans out the same way (`cdkbot apps` on the merge
// commit gives the same legs and keys), each leg deploying its app with its leg's key: the shop's
// leg deploys, bound to the shop's review; the users' leg is refused, naming the stack, although
// on-unreviewed is refuse for both and the combined review passed.
func TestMonorepoDeployLegsBoundToTheirReviews(t *testing.T) {
	repo := t.TempDir()
	gitcli.Run(t, repo, "init", "-q", "-b", "main")
	writeDeployableApp(t, repo, "services/shop/infra", "shop-orders")
	writeDeployableApp(t, repo, "services/users/infra", "users-signups")
	if err := os.WriteFile(filepath.Join(repo, "package.json"), []byte(`{"private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	gitcli.Run(t, repo, "add", "-A")
	gitcli.Run(t, repo, "commit", "-q", "-m", "two apps")
	base := gitcli.Run(t, repo, "rev-parse", "HEAD")
	gitcli.Run(t, repo, "checkout", "-q", "-b", "topic")
	writeDeployableApp(t, repo, "services/shop/infra", "shop-orders", "shop-refunds")
	writeDeployableApp(t, repo, "services/users/infra", "users-signups", "users-invites")
	gitcli.Run(t, repo, "add", "-A")
	gitcli.Run(t, repo, "commit", "-q", "-m", "a queue in each app")
	head := gitcli.Run(t, repo, "rev-parse", "HEAD")

	// The review: fan out, one leg per touched app, fan in.
	gh := ghserver.New(t, actionToken)
	actionEnv(t, gh, actionToken, "pull_request", prEvent(t, "synchronize", head, base))
	for k, v := range map[string]string{"INPUT_BASE-ASSEMBLY": "", "INPUT_HEAD-ASSEMBLY": "", "INPUT_FAIL-ON": "",
		"GITHUB_SHA": head, "XDG_CACHE_HOME": t.TempDir(), "INPUT_SYNTH-COMMAND": `cp -R cdk.out/. "$CDK_OUTDIR"`} {
		t.Setenv(k, v)
	}
	m, plan := fanOut(t, repo, base, head)
	if m.Count != 2 {
		t.Fatalf("review matrix %+v", m)
	}
	reports := t.TempDir()
	for _, l := range m.Matrix.Include {
		runLeg(t, repo, l.Dir, l.Key, l.Artifact, reports)
	}
	t.Setenv("INPUT_CHECK-NAME", "")
	t.Setenv("INPUT_COMMENT", "")
	if code, stdout, stderr := run(t, "fan-in", "--plan", plan, "--reports", reports, "--post"); code != ExitOK {
		t.Fatalf("fan-in: exit %d\n%s\n%s", code, stdout, stderr)
	}
	legs, ok, err := render.FanInLegs(gh.Body(42), nil)
	if len(gh.Comments[42]) != 1 || !ok || err != nil || len(legs) != 2 || len(legs[0].Stacks) != 1 {
		t.Fatalf("%d comments; the combined review records %d legs:\n%s", len(gh.Comments[42]), len(legs), gh.Body(42))
	}

	// The same reports fanned in for a fork's pull request (pull_request_target, whose token can
	// write) are not the pull request's own run's: the comment is unverified and records no leg.
	fork := realEvent(t, "pull_request", "synchronize", func(p map[string]any) {
		set(p, "pull_request.number", 42)
		set(p, "pull_request.head.sha", head)
		set(p, "pull_request.head.repo.full_name", "mallory/shop")
		set(p, "pull_request.base.repo.full_name", "acme/shop")
	})
	t.Setenv("GITHUB_EVENT_NAME", "pull_request_target")
	t.Setenv("GITHUB_EVENT_PATH", fork)
	if code, stdout, stderr := run(t, "fan-in", "--plan", plan, "--reports", reports, "--post"); code != ExitOK {
		t.Fatalf("fork fan-in: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if m, _ := render.ParseMarker(gh.Body(42)); !m.Unverified || strings.Contains(gh.Body(42), `"legs"`) {
		t.Fatalf("a fork's combined review records its legs as reviewed:\n%s", gh.Body(42))
	}
	actionEnv(t, gh, actionToken, "pull_request", prEvent(t, "synchronize", head, base))
	if code, stdout, stderr := run(t, "fan-in", "--plan", plan, "--reports", reports, "--post"); code != ExitOK {
		t.Fatalf("fan-in again: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// Merged, with a change to the users app no review showed.
	gitcli.Run(t, repo, "checkout", "-q", "main")
	gitcli.Run(t, repo, "merge", "-q", "--no-ff", "--no-commit", "topic")
	writeDeployableApp(t, repo, "services/users/infra", "users-signups", "users-invites", "users-unreviewed")
	gitcli.Run(t, repo, "add", "-A")
	gitcli.Run(t, repo, "commit", "-q", "-m", "Merge pull request #42")
	merged := gitcli.Run(t, repo, "rev-parse", "HEAD")
	pr := mergedPR(42, head)
	pr.MergeCommitSHA = merged
	gh.Pulls[42] = pr
	gh.CommitPulls[merged] = []int{42}

	// The deploy fans out over the apps the merge commit changed: the review's legs, by key.
	code, stdout, stderr := runTB("apps", "--repo", repo, "--base", gitcli.Run(t, repo, "rev-parse", merged+"^1"),
		"--head", merged, "--key", "cdk/review", "--format", "github-matrix")
	var deploy matrixOutput
	if code != ExitOK || json.Unmarshal([]byte(stdout), &deploy) != nil || deploy.Count != 2 {
		t.Fatalf("deploy matrix: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for i, l := range deploy.Matrix.Include {
		if l.Key != m.Matrix.Include[i].Key {
			t.Fatalf("deploy leg %q is not the review's leg %q", l.Key, m.Matrix.Include[i].Key)
		}
	}
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	results := map[string]string{}
	for _, l := range deploy.Matrix.Include {
		actionEnv(t, gh, actionToken, "push", pushEvent(t, merged))
		app := filepath.Join(repo, filepath.FromSlash(l.Dir))
		for k, v := range map[string]string{"INPUT_KEY": l.Key, "INPUT_WORKING-DIRECTORY": app,
			"INPUT_ASSEMBLY": filepath.Join(app, "cdk.out"), "INPUT_ON-UNREVIEWED": "refuse"} {
			t.Setenv(k, v)
		}
		code, stdout, stderr := run(t, "action")
		results[l.App] = stdout + stderr
		want := map[string]int{"services/shop/infra": ExitOK, "services/users/infra": ExitVerdict}[l.App]
		if code != want {
			t.Errorf("deploy leg %s: exit %d, want %d\n%s\n%s", l.Key, code, want, stdout, stderr)
		}
	}
	if shop := results["services/shop/infra"]; strings.Contains(shop, "not as reviewed") ||
		!strings.Contains(shop, "ServicesShopInfra: deployed") {
		t.Errorf("the shop's leg, as its leg reviewed it:\n%s", shop)
	}
	users := results["services/users/infra"]
	if !strings.Contains(users, "not as reviewed: ServicesUsersInfra: template differs from the review of #42 at "+
		commitid.Short(head, commitid.GitHub)) || !strings.Contains(users, "nothing deployed") ||
		strings.Contains(users, "ServicesUsersInfra: deployed") {
		t.Errorf("the users' leg deployed what its review did not show:\n%s", users)
	}
	var deployComments []string
	for _, c := range gh.Comments[42] {
		if k, ok := render.MarkerKey(c.Body); ok && strings.HasPrefix(k, "deploy/") {
			deployComments = append(deployComments, k)
		}
	}
	if strings.Join(deployComments, " ") != "deploy/cdk/review/services/shop/infra deploy/cdk/review/services/users/infra" {
		t.Errorf("deploy comments %q: one per leg", deployComments)
	}
}
