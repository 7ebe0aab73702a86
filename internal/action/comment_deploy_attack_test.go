package action

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/githubapi"
)

// The head's app prints no change while it is reviewed (it can tell it runs as cdkbot-head) and
// something else once merged. With comment: sticky the review's marker records every stack as
// the review saw it, and the merge deploy refuses what differs. With comment: changes the
// no-change review deletes the marker: the merged pull request then reads as never reviewed, so
// the deploy is only as bound as on-unreviewed makes it. The documented pairing (README:
// comment: changes with on-unreviewed: refuse) refuses; with warn it would deploy what no review
// showed, which is why the README says to keep sticky unless the deploy refuses unreviewed merges.
func TestCommentChangesKeepsTheDeployBound(t *testing.T) {
	base := manyStacks(t, 3, -1)
	dir := "../cli/demo/after" // what the merged commit's app makes: no stack the review saw
	merged, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ comment, onUnreviewed string }{{"sticky", "warn"}, {"changes", "refuse"}} {
		comment := c.comment
		srv := postingServer(t)
		srv.Pulls[7].MergedAt = "2026-11-20T10:00:00Z"
		srv.CommitPulls["c1"] = []int{7}
		if r, err := postingRun(t, srv, base, base, comment, ""); err != nil {
			t.Fatalf("%s: %v\n%s", comment, err, r)
		}
		gh, err := githubapi.New(githubapi.Options{Token: "ghs_app", APIURL: srv.APIURL(), Owner: "acme", Repo: "shop"})
		if err != nil {
			t.Fatal(err)
		}
		dep := &fakeDeployer{a: merged, require: "never"}
		r := &recorder{}
		err = DeployOnMerge(context.Background(), Deps{GitHub: gh, Runner: r, Deployer: dep}, Merge{Branch: "main",
			DefaultBranch: "main", After: "c1", Commits: []string{"c1"}, Key: "cdk/review/.", OnUnreviewed: c.onUnreviewed})
		if !errors.Is(err, ErrBlocked) || len(dep.approved) != 0 {
			t.Errorf("comment: %s: the merge deploys what the review did not show (%v)\n%s", comment, err, r)
		}
	}
}
