package action

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

// fakeDeployer records what the flow asked of it.
type fakeDeployer struct {
	a         *assembly.Assembly
	require   string
	policy    *aspects.Config
	approved  []bool
	templates []map[string][]byte // what each Deploy was given to deploy
	running   []map[string]deployplan.Expectation
}

func (f *fakeDeployer) Assembly(context.Context) (*assembly.Assembly, error) { return f.a, nil }
func (f *fakeDeployer) RequireApproval() (string, error)                     { return f.require, nil }
func (f *fakeDeployer) Policy() (*aspects.Config, error)                     { return f.policy, nil }
func (f *fakeDeployer) Deploy(_ context.Context, _ *assembly.Assembly, req DeployRequest) (*deployplan.Report, error) {
	f.approved = append(f.approved, req.Approved)
	f.templates = append(f.templates, req.Templates)
	f.running = append(f.running, req.Running)
	return &deployplan.Report{}, nil
}

// require-approval: broadening takes the review's approval rule: the merged pull request's
// author labelling it does not approve; a maintainer does. The review written by the token's
// own identity (a GitHub App here) is found.
func TestDeployApprovalUsesTheReviewRule(t *testing.T) {
	dir := "../cli/demo/after"
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := review.Identities(a, nil)
	srv := ghserver.NewWith(t, ghserver.Options{Tokens: map[string]ghserver.Identity{"ghs_app": ghserver.AppToken}})
	srv.Pulls[7] = &ghserver.PullRequest{Number: 7, Author: "dev", HeadSHA: "h7", BaseRef: "main", HeadRef: "t", MergedAt: "2026-11-20T10:00:00Z",
		Labels: []string{label}}
	srv.CommitPulls["c1"] = []int{7}
	srv.LabelEvents[7] = []ghserver.LabelEvent{{Label: label, Actor: "dev"}}
	srv.Permissions["dev"], srv.Permissions["bob"] = "admin", "write"
	srv.Add(7, "cdk-deployer[bot]", render.MarkerComment(&review.Report{Key: "cdk/review/.", HeadSHA: "h7", Identity: ids}))
	gh, err := githubapi.New(githubapi.Options{Token: "ghs_app", APIURL: srv.APIURL(), Owner: "acme", Repo: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	dep := &fakeDeployer{a: a, require: "broadening"}
	r := &recorder{}
	in := Merge{Branch: "main", DefaultBranch: "main", After: "c1", Commits: []string{"c1"}, Key: "cdk/review/.", OnUnreviewed: "refuse",
		Gate: Gate{Approval: ApproveByLabel}}
	if err := DeployOnMerge(context.Background(), Deps{GitHub: gh, Runner: r, Deployer: dep}, in); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if !r.has("dev is the pull request's author") || r.has("not as reviewed") {
		t.Errorf("log:\n%s", r)
	}
	srv.Label(7, label, "bob") // after the review comment: bob approved what it showed
	if err := DeployOnMerge(context.Background(), Deps{GitHub: gh, Runner: r, Deployer: dep}, in); err != nil {
		t.Fatal(err)
	}
	if len(dep.approved) != 2 || dep.approved[0] || !dep.approved[1] || !strings.Contains(r.String(), "#7 approved by bob (label "+label+")") {
		t.Errorf("approved %v\n%s", dep.approved, r)
	}
}

// A review re-rendered from a fork's report is data the fork's author controlled: the deploy does
// not count it as what was reviewed.
func TestForkReviewIsNotTakenAsReviewed(t *testing.T) {
	dir := "../cli/demo/after"
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := review.Identities(a, nil)
	hashes := review.IdentityStrings(ids) // what the fork's report claims: it must not count
	srv := ghserver.New(t, "ghs_x")
	srv.Pulls[7] = &ghserver.PullRequest{Number: 7, Author: "mallory", HeadSHA: "h7", BaseRef: "main", HeadRef: "t", MergedAt: "2026-11-20T10:00:00Z"}
	srv.CommitPulls["c1"] = []int{7}
	var fork bytes.Buffer
	raw, _ := json.Marshal(map[string]any{"templateHashes": hashes, "gates": []any{}, "diff": map[string]any{"stacks": []any{}}})
	if err := render.ForkReviewMarkdown(&fork, raw, "cdk/review/.", "h7", 0); err != nil {
		t.Fatal(err)
	}
	srv.Add(7, "github-actions[bot]", fork.String())
	gh, _ := githubapi.New(githubapi.Options{Token: "ghs_x", APIURL: srv.APIURL(), Owner: "acme", Repo: "shop"})
	r := &recorder{}
	dep := &fakeDeployer{a: a, require: "never"}
	err = DeployOnMerge(context.Background(), Deps{GitHub: gh, Runner: r, Deployer: dep}, Merge{Branch: "main", DefaultBranch: "main", After: "c1",
		Commits: []string{"c1"}, Key: "cdk/review/.", OnUnreviewed: "refuse"})
	if !errors.Is(err, ErrBlocked) || !r.has("#7 was reviewed in a fork's workflow, whose report cdkbot cannot verify") || len(dep.approved) != 0 {
		t.Errorf("%v\n%s", err, r)
	}
}

// The policy is applied once per deploy: the templates the merge compares with the review's
// hashes are the ones it hands to the deployer, mutations included, so what deploys is what
// was compared.
func TestDeployGetsTheTemplatesItCompared(t *testing.T) {
	dir := "../cli/demo/after"
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	policy, _, err := aspects.Load(".cdkbot.yml", []byte("aspects:\n  - use: tags\n    with: { tags: { team: payments } }\n"))
	if err != nil {
		t.Fatal(err)
	}
	mutated, err := review.MutatedTemplates(a, policy, nil)
	if err != nil || len(mutated) == 0 {
		t.Fatalf("the tags aspect mutates nothing here (%v): the test proves nothing", err)
	}
	ids, _ := review.Identities(a, mutated)
	srv := ghserver.NewWith(t, ghserver.Options{Tokens: map[string]ghserver.Identity{"ghs_app": ghserver.AppToken}})
	srv.Pulls[7] = &ghserver.PullRequest{Number: 7, Author: "dev", HeadSHA: "h7", BaseRef: "main", HeadRef: "t", MergedAt: "2026-11-20T10:00:00Z"}
	srv.CommitPulls["c1"] = []int{7}
	srv.Add(7, "cdk-deployer[bot]", render.MarkerComment(&review.Report{Key: "cdk/review/.", HeadSHA: "h7", Identity: ids}))
	gh, err := githubapi.New(githubapi.Options{Token: "ghs_app", APIURL: srv.APIURL(), Owner: "acme", Repo: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	dep := &fakeDeployer{a: a, require: "never", policy: policy}
	r := &recorder{}
	err = DeployOnMerge(context.Background(), Deps{GitHub: gh, Runner: r, Deployer: dep}, Merge{Branch: "main", DefaultBranch: "main",
		After: "c1", Commits: []string{"c1"}, Key: "cdk/review/.", OnUnreviewed: "refuse", Gate: Gate{Approval: ApproveByLabel}})
	if err != nil || r.has("not as reviewed") {
		t.Fatalf("%v\n%s", err, r)
	}
	if len(dep.templates) != 1 {
		t.Fatalf("deployed %d times", len(dep.templates))
	}
	got := dep.templates[0]
	if len(got) != len(a.AllStacks()) {
		t.Errorf("the deployer was given %d templates for %d stacks: every stack's bytes are pinned",
			len(got), len(a.AllStacks()))
	}
	for id, body := range mutated {
		if string(got[id]) != string(body) {
			t.Errorf("%s: the deployer was not given the template the review's hash was compared with", id)
		}
	}
}
