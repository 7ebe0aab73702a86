package action

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/apps"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/pipeline"
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
