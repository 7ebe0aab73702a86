package action

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/apps"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

// fanOutAttack is a merged pull request #7 (head h7) whose fanned-out review of app shop in dev
// and prod the fan-in combined, and what deploys: the demo's assembly.
type fanOutAttack struct {
	t   *testing.T
	a   *assembly.Assembly
	ids map[string]review.Identity
	srv *ghserver.Server
	gh  *githubapi.Client
	r   *recorder
}

func newFanOutAttack(t *testing.T) *fanOutAttack {
	t.Helper()
	dir := "../cli/demo/after"
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := review.Identities(a, nil)
	if err != nil || len(ids) < 2 {
		t.Fatalf("the demo needs two stacks or more: %v %v", ids, err)
	}
	srv := ghserver.New(t, "ghs_x")
	srv.Pulls[7] = &ghserver.PullRequest{Number: 7, Author: "dev", HeadSHA: "h7", BaseRef: "main", HeadRef: "t",
		MergedAt: "2026-11-20T10:00:00Z"}
	srv.CommitPulls["c1"] = []int{7}
	gh, err := githubapi.New(githubapi.Options{Token: "ghs_x", APIURL: srv.APIURL(), Owner: "acme", Repo: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	return &fanOutAttack{t: t, a: a, ids: ids, srv: srv, gh: gh, r: &recorder{}}
}

func shopPlan(envs ...string) render.FanOut {
	return render.FanOut{Plan: apps.NewPlan("cdk/review", []apps.App{{Name: "shop", Dir: "shop",
		Environments: apps.Environments(map[string][]string{"stage": envs})}},
		apps.Keys{"shop": "1"}, apps.Keys{"shop": "2"}, "")}
}

func (f *fanOutAttack) fanIn(plan render.FanOut, comment string, files ...pipeline.LegFile) {
	f.t.Helper()
	_ = FanIn(context.Background(), Deps{GitHub: f.gh, Runner: f.r}, FanInRequest{PR: 7, HeadSHA: "h7", Plan: plan,
		Files: files, Verified: true, Comment: comment})
}

// deploy runs the merge deploy with key and says whether it deployed.
func (f *fanOutAttack) deploy(key string) (bool, *fakeDeployer) {
	f.t.Helper()
	dep := &fakeDeployer{a: f.a, require: "never"}
	err := DeployOnMerge(context.Background(), Deps{GitHub: f.gh, Runner: f.r, Deployer: dep}, Merge{Branch: "main",
		DefaultBranch: "main", After: "c1", Commits: []string{"c1"}, Key: key, OnUnreviewed: "warn"})
	deployed := err == nil && len(dep.templates) == 1
	if !deployed && !errors.Is(err, ErrBlocked) {
		f.t.Fatalf("neither deployed nor refused: %v\n%s", err, f.r)
	}
	return deployed, dep
}

// without is ids less one stack.
func without(ids map[string]review.Identity, id string) map[string]review.Identity {
	out := maps.Clone(ids)
	delete(out, id)
	return out
}

// combinedBody is the combined comment cdkbot would write for files: what an attacker can copy.
func combinedBody(t *testing.T, plan render.FanOut, files ...pipeline.LegFile) string {
	t.Helper()
	g := newFanOutAttack(t)
	g.fanIn(plan, "", files...)
	if len(g.srv.Comments[7]) != 1 {
		t.Fatalf("%d comments", len(g.srv.Comments[7]))
	}
	return g.srv.Comments[7][0].Body
}

// A user (anyone may comment) pastes, after cdkbot's own combined review, the combined comment
// cdkbot would have written had the blocked leg passed: only the token's identity's comments are
// reviews, so the deploy of that leg still refuses.
func TestMergeDeployIgnoresAForgedCombinedMarker(t *testing.T) {
	f := newFanOutAttack(t)
	plan := shopPlan("dev", "prod")
	f.fanIn(plan, "", recordedLeg(t, "cdk/review/shop/dev", f.ids, false),
		recordedLeg(t, "cdk/review/shop/prod", f.ids, true))
	forged := combinedBody(t, plan, recordedLeg(t, "cdk/review/shop/dev", f.ids, false),
		recordedLeg(t, "cdk/review/shop/prod", f.ids, false))
	if !strings.Contains(forged, `"combined":true`) {
		t.Fatalf("not a combined marker: %.200s", forged)
	}
	f.srv.Add(7, "mallory", forged)
	if deployed, _ := f.deploy("cdk/review/shop/prod"); deployed || !f.r.has("#7's review blocked this change") {
		t.Errorf("a user's pasted combined marker deployed the blocked leg\n%s", f.r)
	}
}

// A combined comment cdkbot wrote and a user with write access edited (GitHub lets them edit any
// comment) reads as cdkbot's: the REST API does not say a comment was edited, nor by whom.
// GraphQL's editor does: a review comment someone else edited last is refused, naming them.
func TestMergeDeployRefusesAnEditedCombinedComment(t *testing.T) {
	f := newFanOutAttack(t)
	plan := shopPlan("dev", "prod")
	f.fanIn(plan, "", recordedLeg(t, "cdk/review/shop/dev", f.ids, false),
		recordedLeg(t, "cdk/review/shop/prod", f.ids, true))
	f.srv.Edit(f.srv.Comments[7][0], "maintainer", combinedBody(t, plan,
		recordedLeg(t, "cdk/review/shop/dev", f.ids, false), recordedLeg(t, "cdk/review/shop/prod", f.ids, false)))
	if deployed, _ := f.deploy("cdk/review/shop/prod"); deployed || !f.r.has("#7's cdkbot review was edited by "+
		"@maintainer: review it again (/cdkbot review) before deploying") {
		t.Errorf("an edited combined comment deployed the blocked leg\n%s", f.r)
	}
}

// A stack added to the app after its leg's review (or one only another leg's review shows, as
// the same stack of another app or environment would be) is not reviewed for this leg: the deploy
// of a leg compares with its own leg's review alone, whatever the other legs recorded.
func TestMergeDeployOfALegRefusesAStackOnlyAnotherLegShowed(t *testing.T) {
	f := newFanOutAttack(t)
	extra := slices.Sorted(maps.Keys(f.ids))[0]
	f.fanIn(shopPlan("dev", "prod"), "", recordedLeg(t, "cdk/review/shop/dev", without(f.ids, extra), false),
		recordedLeg(t, "cdk/review/shop/prod", f.ids, false))
	if deployed, _ := f.deploy("cdk/review/shop/dev"); deployed || !f.r.has(extra+": not in the review of #7") {
		t.Errorf("the dev leg deployed %s, which only prod's review showed\n%s", extra, f.r)
	}
}

// An app the review never covered (apps.ignore at the head, or an app no leg reviewed) deployed
// by a deploy whose key names no leg: every leg's review is compared and none shows its stacks.
func TestMergeDeployWithoutALegKeyRefusesAnAppNoLegReviewed(t *testing.T) {
	f := newFanOutAttack(t)
	hidden := slices.Sorted(maps.Keys(f.ids))[0]
	f.fanIn(shopPlan("dev", "prod"), "", recordedLeg(t, "cdk/review/shop/dev", without(f.ids, hidden), false),
		recordedLeg(t, "cdk/review/shop/prod", without(f.ids, hidden), false))
	if deployed, _ := f.deploy("cdk/deploy/."); deployed || !f.r.has(hidden+": not in the review of #7") {
		t.Errorf("a deploy naming no leg deployed %s, which no leg's review showed\n%s", hidden, f.r)
	}
}

// Keys that look like the passing leg's but are not (its environment in another case, a trailing
// slash or space, a look-alike or doubled slash, a path game, the combined review's own key, the
// prefix in another case): a leg added or renamed after the review, or a matrix value an attacker
// shaped, must not take dev's review. Each is refused as a leg of the fan-out without a review, or
// compared with every leg, where prod's blocked review refuses.
func TestMergeDeployKeyTricksDoNotPickALeg(t *testing.T) {
	f := newFanOutAttack(t)
	f.fanIn(shopPlan("dev", "prod"), "", recordedLeg(t, "cdk/review/shop/dev", f.ids, false),
		recordedLeg(t, "cdk/review/shop/prod", f.ids, true))
	for _, key := range []string{"cdk/review/shop/Dev", "CDK/review/shop/dev", "cdk/review/shop/dev/",
		"cdk/review/shop/dev ", "cdk/review/shop\u2215dev", "cdk/review//shop/dev", "cdk/review/shop/prod/../dev",
		"cdk/review/shop/dev\u200b", "cdk/review/shop", "cdk/review"} {
		f.r = &recorder{}
		if deployed, _ := f.deploy(key); deployed {
			t.Errorf("key %q took dev's review\n%s", key, f.r)
		}
	}
	f.r = &recorder{}
	if deployed, _ := f.deploy("cdk/review/shop/dev"); !deployed {
		t.Errorf("dev's own key refused\n%s", f.r)
	}
}

// An older combined review (comment: new) recorded the leg as passed; the newest one could not
// (its leg failed this time): the older record no longer speaks for the leg.
func TestMergeDeployIgnoresAStaleCombinedRecordOfALeg(t *testing.T) {
	f := newFanOutAttack(t)
	plan := shopPlan("dev", "prod")
	f.fanIn(plan, "new", recordedLeg(t, "cdk/review/shop/dev", f.ids, false),
		recordedLeg(t, "cdk/review/shop/prod", f.ids, false))
	f.fanIn(plan, "new", recordedLeg(t, "cdk/review/shop/dev", f.ids, false))
	if len(f.srv.Comments[7]) != 2 {
		t.Fatalf("%d comments", len(f.srv.Comments[7]))
	}
	if deployed, _ := f.deploy("cdk/review/shop/prod"); deployed ||
		!f.r.has("combined review holds no review of cdk/review/shop/prod") {
		t.Errorf("the older combined review's record deployed prod\n%s", f.r)
	}
}

// A per-leg review comment of the leg's key (a hand-written matrix's, or an earlier workflow's),
// newer than the combined review and blocked, is the leg's word: the combined review's older
// passing record does not outvote it.
func TestMergeDeployNewerLegCommentOutranksTheCombinedRecord(t *testing.T) {
	f := newFanOutAttack(t)
	f.fanIn(shopPlan("dev", "prod"), "", recordedLeg(t, "cdk/review/shop/dev", f.ids, false),
		recordedLeg(t, "cdk/review/shop/prod", f.ids, false))
	mk, _ := json.Marshal(render.Marker{Tool: "cdkbot", Key: "cdk/review/shop/prod", HeadSHA: "h7",
		Stacks: review.IdentityStrings(f.ids), Blocked: true})
	f.srv.Add(7, "github-actions[bot]", render.MarkerPrefix+string(mk)+" -->\n### cdkbot review")
	if deployed, _ := f.deploy("cdk/review/shop/prod"); deployed || !f.r.has("#7's review blocked this change") {
		t.Errorf("the older combined record outvoted the leg's newer blocked review\n%s", f.r)
	}
}

// A removed app's leg has nothing reviewed, whatever a report claims for it: its deploy refuses.
func TestMergeDeployOfARemovedLegRefuses(t *testing.T) {
	f := newFanOutAttack(t)
	plan := shopPlan("dev")
	plan.Plan = plan.Plan.WithRemoved([]apps.App{{Name: "shop", Dir: "shop", Environments: []apps.Environment{{Name: "dev"}}},
		{Name: "old", Dir: "old", Environments: []apps.Environment{{Name: "dev"}}}},
		[]apps.App{{Name: "shop", Dir: "shop", Environments: []apps.Environment{{Name: "dev"}}}})
	f.fanIn(plan, "", recordedLeg(t, "cdk/review/shop/dev", f.ids, false),
		recordedLeg(t, "cdk/review/old/dev", f.ids, false))
	if deployed, _ := f.deploy("cdk/review/old/dev"); deployed {
		t.Errorf("a removed app's leg deployed on a stray report\n%s", f.r)
	}
}

// require-approval broadening: a label on the pull request approves the deploy of a leg only when
// bound to a review comment of that leg's key; the combined comment carries no leg's gate items,
// so the label cannot be tied to what the leg showed and approves nothing (fail closed).
func TestMergeDeployOfALegLabelApprovesNothing(t *testing.T) {
	f := newFanOutAttack(t)
	f.fanIn(shopPlan("dev", "prod"), "", recordedLeg(t, "cdk/review/shop/dev", f.ids, false),
		recordedLeg(t, "cdk/review/shop/prod", f.ids, false))
	f.srv.Permissions["maintainer"] = "write"
	f.srv.Label(7, "cdkbot/approve-destructive", "maintainer")
	dep := &fakeDeployer{a: f.a, require: "broadening"}
	err := DeployOnMerge(context.Background(), Deps{GitHub: f.gh, Runner: f.r, Deployer: dep}, Merge{Branch: "main",
		DefaultBranch: "main", After: "c1", Commits: []string{"c1"}, Key: "cdk/review/shop/prod", OnUnreviewed: "warn",
		Gate: Gate{Approval: ApproveByLabel, OverrideLabel: "cdkbot/approve-destructive"}})
	if err != nil || len(dep.approved) != 1 || dep.approved[0] {
		t.Errorf("%v, approved %v\n%s", err, dep.approved, f.r)
	}
}

// Two fan-outs on one pull request (two workflows, keyed cdk and cdk/review) can name one leg
// key: app review/shop of cdk and app shop of cdk/review are both cdk/review/shop/dev (app names
// come from the pull request's directories and .cdkbot.yml). The deploy of cdk/review's leg must
// not take the other fan-out's passing record of another app for its own blocked one, whichever
// combined comment is newer: two records of one key are refused.
func TestMergeDeployRefusesALegKeyTwoFanOutsRecord(t *testing.T) {
	for _, newerPasses := range []bool{true, false} {
		f := newFanOutAttack(t)
		mine := render.FanOut{Plan: apps.NewPlan("cdk/review", []apps.App{{Name: "shop", Dir: "shop",
			Environments: []apps.Environment{{Name: "dev"}}}}, apps.Keys{"shop": "1"}, apps.Keys{"shop": "2"}, "")}
		other := render.FanOut{Plan: apps.NewPlan("cdk", []apps.App{{Name: "review/shop", Dir: "review/shop",
			Environments: []apps.Environment{{Name: "dev"}}}}, apps.Keys{"review/shop": "1"},
			apps.Keys{"review/shop": "2"}, "")}
		if mine.Legs[0].Key != other.Legs[0].Key {
			t.Fatalf("no collision: %s, %s", mine.Legs[0].Key, other.Legs[0].Key)
		}
		key := mine.Legs[0].Key
		first, second := func() { f.fanIn(mine, "", recordedLeg(t, key, f.ids, true)) },
			func() { f.fanIn(other, "", recordedLeg(t, key, f.ids, false)) }
		if !newerPasses {
			first, second = second, first
		}
		first()
		second()
		if len(f.srv.Comments[7]) != 2 {
			t.Fatalf("%d comments", len(f.srv.Comments[7]))
		}
		// The leg's own deploy, and a deploy whose key names no leg (compared with every leg's review,
		// where the blocked one must not be dropped for the other of the same key).
		for _, deployKey := range []string{key, "infra/deploy"} {
			if deployed, _ := f.deploy(deployKey); deployed {
				t.Errorf("newer passes %v, deploy key %s: one fan-out's record of %s outvoted the other's blocked "+
					"one\n%s", newerPasses, deployKey, key, f.r)
			}
		}
	}
}

// An app hidden from review (apps.ignore at the head: the plan reports it removed, and nothing
// deploys it) changes meanwhile; a later pull request brings it back, and its leg's review, whose
// base already holds the hidden change, shows no difference. The deploy of that leg is bound to
// the base its review compared with: every stack must run that base before it deploys, so a stack
// still running what it ran before the hidden change is refused by the deploy, not updated.
func TestMergeDeployOfALegIsBoundToItsReviewsBase(t *testing.T) {
	f := newFanOutAttack(t)
	based := map[string]review.Identity{}
	for id, v := range f.ids {
		v.Base = "base-" + id
		based[id] = v
	}
	f.fanIn(shopPlan("dev", "prod"), "", recordedLeg(t, "cdk/review/shop/dev", based, false),
		recordedLeg(t, "cdk/review/shop/prod", f.ids, false))
	deployed, dep := f.deploy("cdk/review/shop/dev")
	if !deployed {
		t.Fatalf("refused\n%s", f.r)
	}
	for id := range f.ids {
		if got := dep.running[0][id]; got.Digest != "base-"+id || got.Absent {
			t.Errorf("%s deploys expecting %+v to run, not its leg's review's base", id, got)
		}
	}
}

// A fork's pull request, reviewed fanned out under pull_request: the fork's token cannot write,
// so the fan-in posts nothing (ReadOnly) and records nothing. The merge deploy of a leg then finds
// no cdkbot review at all; it used to deploy the fork's code with a warning under on-unreviewed:
// warn (the default). A fork's pull request without cdkbot's comment is a fork's review: refused.
func TestMergeDeployOfAForksFannedOutReviewRefuses(t *testing.T) {
	f := newFanOutAttack(t)
	f.srv.Pulls[7].HeadRepo = "mallory/shop"
	_ = FanIn(context.Background(), Deps{GitHub: f.gh, Runner: f.r}, FanInRequest{PR: 7, HeadSHA: "h7",
		Plan: shopPlan("dev"), Files: []pipeline.LegFile{recordedLeg(t, "cdk/review/shop/dev", f.ids, false)},
		ReadOnly: true})
	if len(f.srv.Comments[7]) != 0 {
		t.Fatalf("a read-only fan-in commented")
	}
	if deployed, _ := f.deploy("cdk/review/shop/dev"); deployed {
		t.Errorf("a fork's merged pull request deployed with no review recorded\n%s", f.r)
	}
}

// The same collision with one record: fan-out cdk/review's leg cdk/review/shop/dev sent no report
// (its app made its synthesis fail), and fan-out cdk recorded its app review/shop under that very
// key. Nothing may stand for a leg of a fanned-out review whose own review is not there.
func TestMergeDeployRefusesALegKeyAnotherFanOutRecordsAlone(t *testing.T) {
	f := newFanOutAttack(t)
	mine := render.FanOut{Plan: apps.NewPlan("cdk/review", []apps.App{{Name: "shop", Dir: "shop",
		Environments: []apps.Environment{{Name: "dev"}}}}, apps.Keys{"shop": "1"}, apps.Keys{"shop": "2"}, "")}
	other := render.FanOut{Plan: apps.NewPlan("cdk", []apps.App{{Name: "review/shop", Dir: "review/shop",
		Environments: []apps.Environment{{Name: "dev"}}}}, apps.Keys{"review/shop": "1"},
		apps.Keys{"review/shop": "2"}, "")}
	key := mine.Legs[0].Key
	f.fanIn(mine, "")
	f.fanIn(other, "", recordedLeg(t, key, f.ids, false))
	if deployed, _ := f.deploy(key); deployed {
		t.Errorf("fan-out cdk's record of app review/shop stood for cdk/review's leg that never reported\n%s", f.r)
	}
}
