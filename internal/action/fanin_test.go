package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/apps"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/pullrequest"
	"github.com/cdkbot/cdkbot/internal/render"
)

const passedReview = `{"gates":[],"diff":{"stacks":[],"summary":{}}}`
const blockedReview = `{"gates":[{"name":"destroy","triggered":true,"enforced":true,"items":["Table <x>"]}],"failed":true,"diff":{"stacks":[],"summary":{"destroy":1,"stacksChanged":1}}}`

// legFile is the report file a leg's review writes (SaveReportIn), for pull request pr.
func legFile(t *testing.T, path string, pr int, key, head string, failed bool, review string) pipeline.LegFile {
	t.Helper()
	m, _ := json.Marshal(render.Marker{Tool: "cdkbot", Key: key, HeadSHA: head})
	raw, err := json.Marshal(SavedReport{PullRequest: pr, Key: key, Failed: failed, Review: json.RawMessage(review),
		Comment: render.MarkerPrefix + string(m) + " -->\n### cdkbot review"})
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.LegFile{Path: path, Raw: raw}
}

func fanInPlan() render.FanOut {
	envs := apps.Environments(map[string][]string{"stage": {"dev", "prod"}})
	list := []apps.App{{Name: "a", Dir: "infra/a", Environments: envs}, {Name: "b", Dir: "b", Environments: envs}}
	return render.FanOut{Plan: apps.NewPlan("cdk/review", list, apps.Keys{"infra/a": "1", "b": "2"},
		apps.Keys{"infra/a": "9", "b": "2"}, "")}
}

// All legs passed: one comment under the plan's key, one successful check run, no error.
func TestFanInPostsOneCommentAndOneCheckRun(t *testing.T) {
	gh, r := &flowGitHub{}, &recorder{}
	in := FanInRequest{PR: 7, HeadSHA: "h", Plan: fanInPlan(), Files: []pipeline.LegFile{
		legFile(t, "1/cdkbot-report.json", 7, "cdk/review/a/dev", "h", false, passedReview),
		legFile(t, "2/cdkbot-report.json", 7, "cdk/review/a/prod", "h", false, passedReview),
	}}
	if err := FanIn(context.Background(), Deps{GitHub: gh, Runner: r}, in); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if strings.Join(gh.calls, ",") != "upsert 7,check cdkbot success" || len(gh.checks[0].Annotations) != 0 {
		t.Errorf("calls %q checks %+v", gh.calls, gh.checks)
	}
	if k, _ := render.MarkerKey(gh.comments[0].body); k != "cdk/review" || !gh.comments[0].ours(gh.comments[0].body) {
		t.Errorf("comment key %q", k)
	}
	if r.outputs["failed"] != "false" || !strings.Contains(r.summary, "#### ✅ a · dev") {
		t.Errorf("%+v\n%s", r.outputs, r.summary)
	}
}

// A leg that blocked, a leg that sent nothing, a report of another pull request or another
// commit, a file that is no report: the verdict fails closed, each is annotated at the app's
// cdk.json, and the job's errors say which leg.
func TestFanInFailsClosed(t *testing.T) {
	for name, c := range map[string]struct {
		files []pipeline.LegFile
		want  string
	}{
		"blocked": {[]pipeline.LegFile{
			legFile(t, "1", 7, "cdk/review/a/dev", "h", true, blockedReview),
			legFile(t, "2", 7, "cdk/review/a/prod", "h", false, passedReview)}, "cdkbot a (dev) gate destroy"},
		"missing": {[]pipeline.LegFile{legFile(t, "1", 7, "cdk/review/a/dev", "h", false, passedReview)},
			"cdkbot a (prod): missing"},
		"other pull request": {[]pipeline.LegFile{
			legFile(t, "1", 7, "cdk/review/a/dev", "h", false, passedReview),
			legFile(t, "2", 8, "cdk/review/a/prod", "h", false, passedReview)}, "cdkbot a (prod): missing"},
		"other commit": {[]pipeline.LegFile{
			legFile(t, "1", 7, "cdk/review/a/dev", "h", false, passedReview),
			legFile(t, "2", 7, "cdk/review/a/prod", "old", false, passedReview)}, "cdkbot a (prod): invalid"},
		"not a report": {[]pipeline.LegFile{
			legFile(t, "1", 7, "cdk/review/a/dev", "h", false, passedReview),
			{Path: "2", Raw: []byte(`{"key":"cdk/review/a/prod","failed":false}`)}}, "cdkbot a (prod): missing"},
		"marker of another key": {[]pipeline.LegFile{
			legFile(t, "1", 7, "cdk/review/a/dev", "h", false, passedReview),
			func() pipeline.LegFile {
				f := legFile(t, "2", 7, "cdk/review/a/dev", "h", false, passedReview)
				f.Raw = []byte(strings.Replace(string(f.Raw), `"key":"cdk/review/a/dev"`, `"key":"cdk/review/a/prod"`, 1))
				return f
			}()}, "cdkbot a (prod): missing"},
	} {
		t.Run(name, func(t *testing.T) {
			gh, r := &flowGitHub{}, &recorder{}
			err := FanIn(context.Background(), Deps{GitHub: gh, Runner: r},
				FanInRequest{PR: 7, HeadSHA: "h", Plan: fanInPlan(), Files: c.files})
			if !errors.Is(err, ErrBlocked) || len(gh.comments) != 1 || len(gh.checks) != 1 || gh.checks[0].Conclusion != "failure" {
				t.Fatalf("%v %q\n%s", err, gh.calls, r)
			}
			var titles []string
			for _, a := range gh.checks[0].Annotations {
				titles = append(titles, a.Path+": "+a.Title)
			}
			if !strings.Contains(strings.Join(titles, "\n"), "infra/a/cdk.json: "+c.want) || !r.has("error: cdkbot: a") {
				t.Errorf("annotations %q\n%s", titles, r)
			}
		})
	}
}

// A fork's token cannot write: the summary holds the review, nothing is posted, the verdict
// is the exit code. With no pull request nothing is posted either.
func TestFanInReadOnly(t *testing.T) {
	gh, r := &flowGitHub{}, &recorder{}
	err := FanIn(context.Background(), Deps{GitHub: gh, Runner: r}, FanInRequest{PR: 7, HeadSHA: "h", Plan: fanInPlan(), ReadOnly: true})
	if !errors.Is(err, ErrBlocked) || len(gh.calls) != 0 || !strings.Contains(r.summary, "missing") {
		t.Errorf("%v %q", err, gh.calls)
	}
}

func TestCommentKey(t *testing.T) {
	if k, err := CommentKey("", "cdk/review/."); k != "cdk/review/." || err != nil {
		t.Errorf("%q %v", k, err)
	}
	if k, err := CommentKey("cdk/review/shop/prod", "cdk/review/."); k != "cdk/review/shop/prod" || err != nil {
		t.Errorf("%q %v", k, err)
	}
	for _, bad := range []string{"a\nb", "x --> y", strings.Repeat("k", 201), `a"b`} {
		if _, err := CommentKey(bad, "j"); !failure.Is(err, failure.Usage) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A leg with more stacks than its marker holds (the marker keeps their digest) and no comment of
// its own (comment: off) hands its identities to the fan-in in its report: the combined record
// holds them, so the leg's deploy is bound to them. Identities that are not the digest's count
// for nothing (the deploy of that leg refuses).
func TestFanInTakesALargeLegsIdentitiesFromItsReport(t *testing.T) {
	stacks := map[string]string{}
	for i := range 60 {
		stacks[fmt.Sprintf("aws://1/eu-west-1/Stack%02d", i)] = fmt.Sprintf("h%02d", i)
	}
	leg := func(ids map[string]string) pipeline.LegFile {
		m, _ := json.Marshal(render.Marker{Tool: "cdkbot", Key: "cdk/review/a/dev", HeadSHA: "h",
			StacksDigest: render.IdentitiesDigest(stacks), IdentityParts: 1})
		raw, err := json.Marshal(SavedReport{PullRequest: 7, Key: "cdk/review/a/dev", Review: json.RawMessage(passedReview),
			Comment: render.MarkerPrefix + string(m) + " -->\n### cdkbot review", Identities: ids})
		if err != nil {
			t.Fatal(err)
		}
		return pipeline.LegFile{Path: "dev/cdkbot-report.json", Raw: raw}
	}
	record := func(c apps.Combined) render.Marker {
		for _, s := range c.Sections {
			if s.Key == "cdk/review/a/dev" {
				var m render.Marker
				if err := json.Unmarshal(s.Record, &m); err != nil {
					t.Fatal(err)
				}
				return m
			}
		}
		t.Fatal("no section for the leg")
		return render.Marker{}
	}
	c := CombineReports(FanInRequest{PR: 7, HeadSHA: "h", Plan: fanInPlan(), Files: []pipeline.LegFile{leg(stacks)}})
	if m := record(c); len(m.Stacks) != 60 || m.StacksDigest != "" {
		t.Errorf("the leg's record holds %d stacks (digest %q), want all 60", len(m.Stacks), m.StacksDigest)
	}
	forged := maps.Clone(stacks)
	forged["aws://1/eu-west-1/Stack00"] = "other"
	c = CombineReports(FanInRequest{PR: 7, HeadSHA: "h", Plan: fanInPlan(), Files: []pipeline.LegFile{leg(forged)}})
	if m := record(c); len(m.Stacks) != 0 || m.StacksDigest == "" {
		t.Errorf("identities that are not the digest's were taken: %d stacks", len(m.Stacks))
	}
}

// A review whose marker keeps only its stacks' digest writes their identities into its report
// file (what TestFanInTakesALargeLegsIdentitiesFromItsReport reads back); a small one does not.
func TestLargeReviewReportCarriesItsIdentities(t *testing.T) {
	for _, c := range []struct {
		stacks int
		want   bool
	}{{3, false}, {120, true}} {
		srv := postingServer(t)
		gh, err := githubapi.New(githubapi.Options{Token: "ghs_app", APIURL: srv.APIURL(), Owner: "acme", Repo: "shop"})
		if err != nil {
			t.Fatal(err)
		}
		var saved SavedReport
		pr := pullrequest.Facts{Number: 7, Author: "dev", HeadSHA: headHex, BaseSHA: baseHex}
		d := Deps{GitHub: gh, Runner: &recorder{}, Reviewer: givenReviewer{manyStacks(t, c.stacks, -1), manyStacks(t, c.stacks, 1)},
			SaveReport: func(r SavedReport) (string, error) { saved = r; return "report.json", nil }}
		err = ReviewPullRequest(context.Background(), d, PullRequestReview{Event: "pull_request", PR: pr, Key: "cdk/review/.",
			Comment: "off", Gate: Gate{CheckName: "off"}})
		if err != nil && !errors.Is(err, ErrBlocked) {
			t.Fatal(err)
		}
		m, ok := render.ParseMarker(saved.Comment)
		if !ok {
			t.Fatalf("%d stacks: no marker in the saved comment", c.stacks)
		}
		switch {
		case c.want && (m.StacksDigest == "" || render.IdentitiesDigest(saved.Identities) != m.StacksDigest):
			t.Errorf("%d stacks: the report's %d identities are not the marker's digest", c.stacks, len(saved.Identities))
		case !c.want && saved.Identities != nil:
			t.Errorf("%d stacks: the report repeats identities its marker holds", c.stacks)
		}
	}
}
