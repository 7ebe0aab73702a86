package action

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pullrequest"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

// manyStacks is an assembly of n one-resource stacks; the stack numbered changed (if any) has
// another queue name.
func manyStacks(t *testing.T, n, changed int) *assembly.Assembly {
	return stacksWith(t, n, changed, false)
}

// stacksWith is manyStacks, each stack with a table too when tables is true.
func stacksWith(t *testing.T, n, changed int, tables bool) *assembly.Assembly {
	t.Helper()
	fsys := fstest.MapFS{}
	var arts []string
	for i := range n {
		id := fmt.Sprintf("Service%03d", i)
		name := id
		if i == changed {
			name += "-renamed"
		}
		arts = append(arts, fmt.Sprintf(`%q: {"type": "aws:cloudformation:stack", "environment": "aws://123456789012/eu-west-1",
			"properties": {"templateFile": %q}}`, id, id+".template.json"))
		table := ""
		if tables {
			table = `, "Orders": {"Type": "AWS::DynamoDB::Table"}`
		}
		fsys[id+".template.json"] = &fstest.MapFile{Data: fmt.Appendf(nil,
			`{"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": %q}}%s}}`, name, table)}
	}
	fsys["manifest.json"] = &fstest.MapFile{Data: []byte(`{"version": "55.0.0", "artifacts": {` + strings.Join(arts, ",") + `}}`)}
	a, err := assembly.Load(fsys, "cdk.out")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// givenReviewer reviews the given assemblies, as with base-assembly and head-assembly.
type givenReviewer struct{ base, head *assembly.Assembly }

func (g givenReviewer) Review(_ context.Context, req ReviewRequest) (*review.Report, error) {
	return review.Run(review.Input{Base: g.base, Head: g.head, Key: req.Key, HeadSHA: req.HeadSHA, BaseSHA: req.Base})
}

func (givenReviewer) UsesAssemblies() bool { return true }

// 800 stacks (about 150 bytes of deploy identity each): the review comment posts within GitHub's
// limit with its marker whole; the identities go to comments of their own, edited in place on
// the next run; and the merge deploy reads every one back and compares every stack: the same
// assembly deploys, one changed stack is refused by name, and a missing part refuses everything.
func TestLargeReviewKeepsEveryIdentityForTheDeploy(t *testing.T) {
	const key, n = "cdk/review/.", 800
	base, head := manyStacks(t, n, -1), manyStacks(t, n, -1)
	srv := ghserver.NewWith(t, ghserver.Options{Tokens: map[string]ghserver.Identity{"ghs_app": ghserver.AppToken}})
	gh, err := githubapi.New(githubapi.Options{Token: "ghs_app", APIURL: srv.APIURL(), Owner: "acme", Repo: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	pr := pullrequest.Facts{Number: 7, Author: "dev", HeadSHA: "h7", BaseSHA: "b7"}
	review := func() *recorder {
		t.Helper()
		r := &recorder{}
		d := Deps{GitHub: gh, Runner: r, Reviewer: givenReviewer{base, head},
			SaveReport: func(SavedReport) (string, error) { return "report.json", nil }}
		if err := ReviewPullRequest(context.Background(), d, PullRequestReview{Event: "pull_request", PR: pr, Key: key,
			Gate: Gate{CheckName: "off"}}); err != nil {
			t.Fatalf("review: %v\n%s", err, r)
		}
		return r
	}
	r := review()
	var main string
	parts := 0
	for _, c := range srv.Comments[7] {
		if len(c.Body) > render.GitHubCommentLimit {
			t.Errorf("a comment of %d bytes", len(c.Body))
		}
		if _, ok := render.ParseMarker(c.Body); ok {
			main = c.Body
		} else if _, ok := render.ParseIdentityPart(c.Body); ok {
			parts++
		}
	}
	mk, ok := render.ParseMarker(main)
	if !ok || mk.Key != key || mk.HeadSHA != "h7" || mk.IdentityParts != parts || parts < 2 || mk.StacksDigest == "" ||
		!strings.Contains(main, " · cdkbot review\n") {
		t.Fatalf("marker %+v ok %v, %d parts\n%s", mk, ok, parts, r)
	}
	comments := len(srv.Comments[7])
	review() // the next run edits or leaves what is there
	if len(srv.Comments[7]) != comments {
		t.Errorf("a second run left %d comments, the first %d", len(srv.Comments[7]), comments)
	}

	srv.Pulls[7] = &ghserver.PullRequest{Number: 7, Author: "dev", HeadSHA: "h7", BaseRef: "main", HeadRef: "t",
		MergedAt: "2026-11-20T10:00:00Z"}
	srv.CommitPulls["c1"] = []int{7}
	deploy := func(a *assembly.Assembly) (*fakeDeployer, *recorder, error) {
		dep, r := &fakeDeployer{a: a, require: "never"}, &recorder{}
		err := DeployOnMerge(context.Background(), Deps{GitHub: gh, Runner: r, Deployer: dep}, Merge{Branch: "main",
			DefaultBranch: "main", After: "c1", Commits: []string{"c1"}, Key: key, OnUnreviewed: "refuse"})
		return dep, r, err
	}
	if dep, r, err := deploy(head); err != nil || len(dep.approved) != 1 || r.has("not as reviewed") {
		t.Fatalf("the reviewed assembly: %v, deployed %d times\n%s", err, len(dep.approved), r)
	}
	dep, r, err := deploy(manyStacks(t, n, 417))
	if !errors.Is(err, ErrBlocked) || len(dep.approved) != 0 || strings.Count(r.String(), "not as reviewed") != 1 ||
		!r.has("not as reviewed: Service417: template differs from the review of #7 at h7") {
		t.Errorf("one stack changed: %v\n%s", err, r)
	}
	// A part gone (deleted, or never posted): nothing deploys, whatever on-unreviewed says.
	for i, c := range srv.Comments[7] {
		if p, ok := render.ParseIdentityPart(c.Body); ok && p.Part == 2 {
			srv.Comments[7] = append(srv.Comments[7][:i:i], srv.Comments[7][i+1:]...)
			break
		}
	}
	dep, r, err = deploy(head)
	if !errors.Is(err, ErrBlocked) || len(dep.approved) != 0 ||
		!r.has(fmt.Sprintf("which cannot be read whole (%d of its %d parts found)", parts-1, parts)) {
		t.Errorf("a part missing: %v\n%s", err, r)
	}
}

// A fork's review of 2,000 stacks, each destroying a table: the report the trusted workflow posts
// starts with a whole, parseable marker (never cut), shows the verdict, fits GitHub's limit, and
// a second run edits that comment instead of adding one.
func TestLargeForkReportPostsOneParseableComment(t *testing.T) {
	const key, n, head = "cdk/review/.", 2000, "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0"
	var saved SavedReport
	r := &recorder{}
	d := Deps{Runner: r, Reviewer: givenReviewer{stacksWith(t, n, -1, true), manyStacks(t, n, -1)},
		SaveReport: func(s SavedReport) (string, error) { saved = s; return "report.json", nil }}
	err := ReviewPullRequest(context.Background(), d, PullRequestReview{Event: "pull_request", Key: key,
		PR: pullrequest.Facts{Number: 42, Author: "mallory", HeadSHA: head, BaseSHA: "b0", Fork: true}})
	if !errors.Is(err, ErrBlocked) || saved.PullRequest != 42 {
		t.Fatalf("the fork's review: %v %+v\n%s", err, saved.PullRequest, r)
	}
	srv := ghserver.New(t, "ghs_x")
	srv.Pulls[42] = &ghserver.PullRequest{Number: 42, Author: "mallory", HeadSHA: head, HeadRef: "topic", HeadRepo: "mallory/shop",
		BaseRef: "main", BaseSHA: "b0"}
	gh, _ := githubapi.New(githubapi.Options{Token: "ghs_x", APIURL: srv.APIURL(), Owner: "acme", Repo: "shop"})
	run := ghaction.WorkflowRun{Event: "pull_request", HeadSHA: head, HeadBranch: "topic", HeadOwner: "mallory"}
	for i := range 2 {
		if err := PostSavedReport(context.Background(), Deps{GitHub: gh, Runner: r}, saved, run); err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, r)
		}
		if len(srv.Comments[42]) != 1 {
			t.Fatalf("run %d: %d comments", i+1, len(srv.Comments[42]))
		}
	}
	body := srv.Body(42)
	mk, ok := render.ParseMarker(body)
	if !ok || mk.Key != key || mk.HeadSHA != head || !mk.Unverified || len(body) > render.GitHubCommentLimit ||
		!strings.Contains(body, "**Blocked by `destroy-stateful`**") || strings.Count(body, "<!--") != 1 {
		t.Errorf("marker %+v %v, %d bytes:\n%.2000s", mk, ok, len(body), body)
	}
}
