package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

func mergedPR(number int, head string) *ghserver.PullRequest {
	return &ghserver.PullRequest{Number: number, Title: "change " + strconv.Itoa(number), Author: "dev", MergedAt: "2026-11-20T10:00:00Z",
		MergeCommitSHA: "m" + strconv.Itoa(number), HeadSHA: head, HeadRef: "topic", BaseRef: "main", BaseSHA: "1111"}
}

const appToken = "ghs_apptoken_cdk_deployer"

// reviewMarker is the marker cdkbot's review of the assembly in dir would post, for head.
func reviewMarker(t *testing.T, dir, head string) string {
	t.Helper()
	a, err := pipeline.LoadAssembly(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := review.Identities(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	return render.MarkerComment(&review.Report{Key: "cdk/review/.", HeadSHA: head, Identity: ids}) + "\n### cdkbot review"
}

// A push that merged two pull requests deploys into moto and reports on GitHub: the reviews'
// deploy identities are compared (a marker pasted by someone else does not count), a deployment
// per environment goes in_progress → success, both pull requests get the deploy comment, and
// the job summary and outputs say what happened. Then what differs from the reviews is refused,
// whatever on-unreviewed says, and one issue is opened; then each failing deploy comments on it.
func TestActionDeploysOnMerge(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	dir := writeDeployAssembly(t, "merge-topic")

	// An org's GitHub App token: it comments as cdk-deployer[bot], which only GraphQL's viewer tells.
	gh := ghserver.NewWith(t, ghserver.Options{Tokens: map[string]ghserver.Identity{appToken: ghserver.AppToken}})
	gh.Pulls[7], gh.Pulls[8] = mergedPR(7, "h7"), mergedPR(8, "h8")
	gh.Pulls[9] = &ghserver.PullRequest{Number: 9, Author: "dev", HeadSHA: "h9", BaseRef: "main", HeadRef: "other"}
	gh.CommitPulls["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"] = []int{7, 9}
	gh.CommitPulls["cccccccccccccccccccccccccccccccccccccccc"] = []int{8}
	gh.Add(7, "cdk-deployer[bot]", reviewMarker(t, dir, "h7"))
	gh.Add(8, "cdk-deployer[bot]", reviewMarker(t, dir, "h8"))
	gh.Add(8, "mallory", reviewMarker(t, dir, "h8"))             // not ours: ignored
	gh.Add(8, "github-actions[bot]", reviewMarker(t, dir, "h8")) // another bot's: ignored

	output, summary := actionEnv(t, gh, appToken, "push", pushMergeEvent(t))
	t.Setenv("INPUT_ASSEMBLY", dir)
	code, stdout, stderr := run(t, "action")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"::notice::cdkbot: deploying ccccccc, merged by #7, #8",
		"::group::cdkbot: [1/2] Base: deployed",
	} {
		if !strings.Contains(stdout+stderr, want) {
			t.Errorf("log lacks %q:\n%s\n%s", want, stdout, stderr)
		}
	}
	if strings.Contains(stdout+stderr, "not as reviewed") {
		t.Errorf("what the reviews showed was taken as not reviewed:\n%s\n%s", stdout, stderr)
	}
	if len(gh.Deployments) != 1 || gh.Deployments[0].Environment != "123456789012-us-east-1" ||
		gh.Deployments[0].Ref != "cccccccccccccccccccccccccccccccccccccccc" ||
		strings.Join(gh.Deployments[0].States, ",") != "in_progress,success" ||
		gh.Deployments[0].LogURLs[1] != "https://github.com/acme/shop/actions/runs/77" {
		t.Errorf("deployments: %+v", gh.Deployments)
	}
	for _, pr := range []int{7, 8} {
		last := gh.Comments[pr][len(gh.Comments[pr])-1]
		if !strings.HasPrefix(last.Body, `<!-- cdkbot:{"tool":"cdkbot","key":"deploy/cdk/review/`) ||
			!strings.Contains(last.Body, "### ✅ cdkbot deployed <code>ccccccc</code>: 2 deployed") {
			t.Errorf("deploy comment on #%d:\n%s", pr, last.Body)
		}
	}
	if len(gh.Comments[9]) != 0 || len(gh.Issues) != 0 {
		t.Errorf("unmerged #9 or an issue touched: %v %v", gh.Comments[9], gh.Issues)
	}
	sum, _ := os.ReadFile(summary)
	out, _ := os.ReadFile(output)
	if !strings.Contains(string(sum),
		"| ✅ | <code>Base</code> | <code>aws://123456789012/us-east-1</code> | deployed | CREATE_COMPLETE |") ||
		strings.Contains(string(sum), "<!-- cdkbot") {
		t.Errorf("summary:\n%s", sum)
	}
	if !strings.Contains(string(out), "deployed<<") || !strings.Contains(string(out), "\n2\n") ||
		!strings.Contains(string(out), "cdkbot-outputs.json") {
		t.Errorf("outputs:\n%s", out)
	}

	// Refuse what the reviews did not show, with on-unreviewed at its default (warn): the
	// merged pull requests were reviewed, so the deploy is bound to those reviews.
	writeJSONFile(t, filepath.Join(dir, "App.template.json"), map[string]any{"Resources": map[string]any{
		"Broken": map[string]any{"Type": "AWS::SNS::Topic", "Properties": map[string]any{"TopicName": "not a valid name!"}}}})
	code, stdout, stderr = run(t, "action")
	if code != ExitVerdict || !strings.Contains(stdout, "::warning::cdkbot: not as reviewed: App: template differs"+
		" from the review of #7 at h7") || !strings.Contains(stdout, "nothing deployed: 2 item(s) differ from what "+
		"cdkbot's review of the merged pull request showed") || strings.Contains(stdout+stderr, "deploying\n") {
		t.Errorf("refuse: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if len(gh.Issues) != 1 || len(gh.Comments[8]) != 4 ||
		!strings.Contains(gh.Comments[8][3].Body, "### ⛔ cdkbot did not deploy <code>ccccccc</code>") ||
		len(gh.Deployments) != 1 {
		t.Errorf("refused comment: %d comments, %d deployments\n%s", len(gh.Comments[8]), len(gh.Deployments), gh.Body(8))
	}

	// Reviewed as it now is, a stack moto rejects fails with its reason; the issue the refusal
	// opened is commented on. (Once: moto keeps a rejected template as the stack's, so a second
	// attempt finds no change.)
	gh.Add(8, "cdk-deployer[bot]", reviewMarker(t, dir, "h8"))
	code, stdout, stderr = run(t, "action")
	if code != ExitFailure || !strings.Contains(stdout, "::error::cdkbot deploy: stack App (aws://123456789012/us-east-1): "+
		"execute change set: InvalidParameter: Topic names must be made up of only") {
		t.Fatalf("failure: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if len(gh.Issues) != 1 || !strings.Contains(gh.Issues[0].Title, "deploy on main failed") || len(gh.Comments[500]) != 1 ||
		!strings.Contains(gh.Comments[500][0].Body, "Topic names must be made up of only") {
		t.Fatalf("issue: %+v, comments %+v", gh.Issues, gh.Comments[500])
	}
	if d := gh.Deployments[len(gh.Deployments)-1]; strings.Join(d.States, ",") != "in_progress,failure" {
		t.Errorf("failed deployment: %+v", d)
	}
	// An assembly that cannot be read stops the deploy before it starts, reported the same way.
	t.Setenv("INPUT_ASSEMBLY", filepath.Join(t.TempDir(), "missing"))
	code, stdout, _ = run(t, "action")
	if code != ExitUsage || len(gh.Comments[500]) != 2 || !strings.Contains(gh.Comments[500][1].Body, "did not deploy") ||
		!strings.Contains(gh.Comments[8][3].Body, "nothing deployed: ") {
		t.Errorf("unreadable assembly: exit %d, issue comments %d\n%s", code, len(gh.Comments[500]), stdout)
	}
	if !strings.Contains(gh.Issues[0].Body, "merged by #7, #8") ||
		!strings.Contains(gh.Issues[0].Body, "https://github.com/acme/shop/actions/runs/77") {
		t.Errorf("issue body:\n%s", gh.Issues[0].Body)
	}
}

// pushMergeEvent is a real push payload to main carrying two merge commits.
func pushMergeEvent(t *testing.T) string {
	return realEvent(t, "push", "", func(p map[string]any) {
		p["ref"], p["after"] = "refs/heads/main", "cccccccccccccccccccccccccccccccccccccccc"
		set(p, "repository.default_branch", "main")
		var commits []any
		for _, id := range []string{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "cccccccccccccccccccccccccccccccccccccccc"} {
			commits = append(commits, map[string]any{"id": id, "message": "Merge pull request", "distinct": true})
		}
		p["commits"] = commits
	})
}
