package action

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/apps"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// recordedLeg is the report file of a leg whose review recorded identities ids (its comment's
// marker, as the leg's review writes it with comment: off).
func recordedLeg(t *testing.T, key string, ids map[string]review.Identity, failed bool) pipeline.LegFile {
	t.Helper()
	rep := &review.Report{Key: key, HeadSHA: "h7", Identity: ids}
	raw, err := json.Marshal(SavedReport{PullRequest: 7, Key: key, Failed: failed, Review: json.RawMessage(passedReview),
		Comment: render.MarkerComment(rep) + "\n### cdkbot review"})
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.LegFile{Path: key + "/cdkbot-report.json", Raw: raw}
}

// The deploy side of a fan-out: the combined comment carries each leg's record, and the deploy of
// leg K (the key input) is bound to the review of K alone — another leg's blocked review does not
// stop it, its own does; a leg with no valid review, a combined review the deploy cannot verify
// (a fork's), or one that records no leg at all, refuse. Fail closed.
func TestMergeDeployOfAFannedOutReview(t *testing.T) {
	ids := newFanOutAttack(t).ids
	plan := render.FanOut{Plan: apps.NewPlan("cdk/review", []apps.App{{Name: "shop", Dir: "shop",
		Environments: apps.Environments(map[string][]string{"stage": {"dev", "prod"}})}},
		apps.Keys{"shop": "1"}, apps.Keys{"shop": "2"}, "")}
	dev := recordedLeg(t, "cdk/review/shop/dev", ids, false)
	prodBlocked := recordedLeg(t, "cdk/review/shop/prod", ids, true)
	for name, c := range map[string]struct {
		files    []pipeline.LegFile
		verified bool
		key      string // the deploy's key input
		want     string // "" deploys; else what the refusal says
	}{
		"its own leg reviewed it":          {[]pipeline.LegFile{dev, prodBlocked}, true, "cdk/review/shop/dev", ""},
		"its own leg blocked":              {[]pipeline.LegFile{dev, prodBlocked}, true, "cdk/review/shop/prod", "#7's review blocked this change"},
		"its leg sent no report":           {[]pipeline.LegFile{prodBlocked}, true, "cdk/review/shop/dev", "#7's combined review holds no review of cdk/review/shop/dev"},
		"a fork's combined review":         {[]pipeline.LegFile{dev}, false, "cdk/review/shop/dev", "whose report cdkbot cannot verify"},
		"no leg recorded":                  {nil, true, "deploy/.", "#7's combined review records no app's review"},
		"not a leg: every leg must hold":   {[]pipeline.LegFile{dev, prodBlocked}, true, "deploy/.", "#7's review blocked this change"},
		"not a leg: every leg reviewed it": {[]pipeline.LegFile{dev, recordedLeg(t, "cdk/review/shop/prod", ids, false)}, true, "deploy/.", ""},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFanOutAttack(t)
			r := f.r
			_ = FanIn(context.Background(), Deps{GitHub: f.gh, Runner: r}, FanInRequest{PR: 7, HeadSHA: "h7", Plan: plan,
				Files: c.files, Verified: c.verified})
			if len(f.srv.Comments[7]) != 1 {
				t.Fatalf("%d comments after the fan-in\n%s", len(f.srv.Comments[7]), r)
			}
			deployed, dep := f.deploy(c.key)
			switch {
			case c.want == "" && (!deployed || r.has("not as reviewed")):
				t.Errorf("refused\n%s", r)
			case c.want != "" && (deployed || len(dep.templates) != 0 || !r.has(c.want)):
				t.Errorf("want a refusal saying %q, got %d deploys\n%s", c.want, len(dep.templates), r)
			}
		})
	}
}

// The deploy of a leg compares every stack with its leg's record: a stack that differs from it
// is refused, naming the stack, even though the combined review passed.
func TestMergeDeployOfALegRefusesWhatItsReviewDidNotShow(t *testing.T) {
	f := newFanOutAttack(t)
	ids := f.ids
	before, err := assembly.Load(os.DirFS("../cli/demo/before"), "../cli/demo/before")
	if err != nil {
		t.Fatal(err)
	}
	old, _ := review.Identities(before, nil)
	plan := render.FanOut{Plan: apps.NewPlan("cdk/review", []apps.App{{Name: "shop", Dir: "shop",
		Environments: []apps.Environment{{Name: "dev"}, {Name: "prod"}}}}, apps.Keys{"shop": "1"}, apps.Keys{"shop": "2"}, "")}
	gh, r := f.gh, f.r
	if err := FanIn(context.Background(), Deps{GitHub: gh, Runner: r}, FanInRequest{PR: 7, HeadSHA: "h7", Plan: plan,
		Verified: true, Files: []pipeline.LegFile{recordedLeg(t, "cdk/review/shop/dev", ids, false),
			recordedLeg(t, "cdk/review/shop/prod", old, false)}}); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if deployed, _ := f.deploy("cdk/review/shop/dev"); !deployed {
		t.Fatalf("dev\n%s", r)
	}
	deployed, dep := f.deploy("cdk/review/shop/prod")
	if deployed || len(dep.templates) != 0 || !r.has("from the review of #7 at h7") {
		t.Errorf("prod\n%s", r)
	}
}

// Legs whose records do not fit the combined comment have them pooled into comments of their
// own, whose digest the combined marker keeps: the deploy of a leg joins them back and deploys. A leg whose record keeps its identities apart with no comment holding them
// (a review too large for its marker, made with comments off) refuses: never a partial check.
func TestMergeDeployOfALegJoinsItsIdentities(t *testing.T) {
	f := newFanOutAttack(t)
	ids := f.ids
	var envs []apps.Environment
	var files []pipeline.LegFile
	for i := range 40 {
		e := fmt.Sprintf("e%02d", i)
		envs = append(envs, apps.Environment{Name: e})
		files = append(files, recordedLeg(t, "cdk/review/shop/"+e, ids, false))
	}
	apart, _ := json.Marshal(SavedReport{PullRequest: 7, Key: "cdk/review/shop/apart", Review: json.RawMessage(passedReview),
		Comment: render.MarkerPrefix + `{"tool":"cdkbot","key":"cdk/review/shop/apart","headSha":"h7",` +
			`"stacksDigest":"0000","identityParts":1} -->`})
	files = append(files, pipeline.LegFile{Path: "apart/cdkbot-report.json", Raw: apart})
	envs = append(envs, apps.Environment{Name: "apart"})
	plan := render.FanOut{Plan: apps.NewPlan("cdk/review", []apps.App{{Name: "shop", Dir: "shop", Environments: envs}},
		apps.Keys{"shop": "1"}, apps.Keys{"shop": "2"}, "")}
	srv, gh, r := f.srv, f.gh, f.r
	if err := FanIn(context.Background(), Deps{GitHub: gh, Runner: r}, FanInRequest{PR: 7, HeadSHA: "h7", Plan: plan,
		Verified: true, Files: files}); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	// The parts go first (the combined marker never names parts not yet there), then the comment.
	parts, combined := []string{}, ""
	for _, c := range srv.Comments[7] {
		if _, ok := render.ParseIdentityPart(c.Body); ok {
			parts = append(parts, c.Body)
		} else {
			combined = c.Body
		}
	}
	legs, _, err := render.FanInLegs(combined, parts)
	if _, _, noParts := render.FanInLegs(combined, nil); len(srv.Comments[7]) < 2 || err != nil ||
		len(legs) != 41 || noParts == nil {
		t.Fatalf("%d comments, %d legs, %v", len(srv.Comments[7]), len(legs), err)
	}
	if deployed, _ := f.deploy("cdk/review/shop/e07"); !deployed {
		t.Fatalf("e07\n%s", r)
	}
	deployed, dep := f.deploy("cdk/review/shop/apart")
	if deployed || len(dep.templates) != 0 || !r.has("which cannot be read whole") {
		t.Errorf("apart\n%s", r)
	}
}

// The legs' reports are data: a record with more identities than cdkbot posts comments for
// gets none posted (a warning says the deploy of that leg will refuse), not a flood.
func TestFanInBoundsTheIdentityComments(t *testing.T) {
	stacks := map[string]review.Identity{}
	dir := "../cli/demo/after"
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := review.Identities(a, nil)
	var one review.Identity
	for _, id := range ids {
		one = id
	}
	for i := range 2500 { // 2,500 stacks of long names: more than 64 parts
		stacks[fmt.Sprintf("Stack%05d%s", i, strings.Repeat("x", 2000))] = one
	}
	plan := render.FanOut{Plan: apps.NewPlan("cdk/review", []apps.App{{Name: "shop", Dir: "shop",
		Environments: []apps.Environment{{}}}}, apps.Keys{"shop": "1"}, apps.Keys{"shop": "2"}, "")}
	gh, r := &flowGitHub{}, &recorder{}
	if err := FanIn(context.Background(), Deps{GitHub: gh, Runner: r}, FanInRequest{PR: 7, HeadSHA: "h7", Plan: plan,
		Verified: true, Files: []pipeline.LegFile{recordedLeg(t, "cdk/review/shop", stacks, false)}}); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if len(gh.comments) != 1 || !r.has("none posted, and a merge deploy of a leg that needs them will refuse") {
		t.Errorf("%d comments\n%s", len(gh.comments), r)
	}
}

// An app the change removes does not block the combined review, and the job's log says its
// stacks stay deployed.
func TestFanInSaysWhatARemovedAppLeaves(t *testing.T) {
	a := []apps.App{{Name: "shop", Dir: "shop", Environments: []apps.Environment{{}}}}
	gone := apps.App{Name: "users", Dir: "users", Environments: []apps.Environment{{Name: "prod"}}}
	plan := render.FanOut{Plan: apps.NewPlan("cdk/review", a, apps.Keys{"shop": "1", "users": "2"}, apps.Keys{"shop": "3"},
		"").WithRemoved(append(a, gone), a)}
	gh, r := &flowGitHub{}, &recorder{}
	err := FanIn(context.Background(), Deps{GitHub: gh, Runner: r}, FanInRequest{PR: 7, HeadSHA: "h7", Plan: plan,
		Files: []pipeline.LegFile{recordedLeg(t, "cdk/review/shop", nil, false)}})
	if err != nil || !r.has("warning: cdkbot: users (prod) is removed by this change: cdkbot deletes no stack") ||
		!strings.Contains(gh.comments[0].body, "⚠️ | `users` | `prod` | removed: ") {
		t.Errorf("%v\n%s\n%s", err, r, gh.comments[0].body)
	}
}

// Only the newest comment of a key is its word: an older combined review (comment: new), whose
// pooled records later runs replaced, neither binds nor blocks the deploy of a leg.
func TestMergeDeployReadsTheNewestCombinedReview(t *testing.T) {
	f := newFanOutAttack(t)
	a, ids, srv, gh, r := f.a, f.ids, f.srv, f.gh, f.r
	plan := render.FanOut{Plan: apps.NewPlan("cdk/review", []apps.App{{Name: "shop", Dir: "shop",
		Environments: []apps.Environment{{}}}}, apps.Keys{"shop": "1"}, apps.Keys{"shop": "2"}, "")}
	srv.Add(7, "github-actions[bot]", render.MarkerPrefix+`{"tool":"cdkbot","key":"cdk/review","headSha":"h7",`+
		`"combined":true,"legsDigest":"0000","legParts":2} -->`)
	if err := FanIn(context.Background(), Deps{GitHub: gh, Runner: r}, FanInRequest{PR: 7, HeadSHA: "h7", Plan: plan,
		Verified: true, Comment: "new", Files: []pipeline.LegFile{recordedLeg(t, "cdk/review/shop", ids, false)}}); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	dep := &fakeDeployer{a: a, require: "never"}
	err := DeployOnMerge(context.Background(), Deps{GitHub: gh, Runner: r, Deployer: dep}, Merge{Branch: "main",
		DefaultBranch: "main", After: "c1", Commits: []string{"c1"}, Key: "cdk/review/shop", OnUnreviewed: "refuse"})
	if err != nil || len(dep.templates) != 1 || len(srv.Comments[7]) < 2 {
		t.Errorf("%v, %d comments\n%s", err, len(srv.Comments[7]), r)
	}
}
