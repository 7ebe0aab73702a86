package action

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/pullrequest"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

const (
	headHex = "0123456789abcdef0123456789abcdef01234567"
	baseHex = "89abcdef0123456789abcdef0123456789abcdef"
)

// postingRun reviews pull request 7 of srv, comparing base with head through the real GitHub
// client, with the comment and result-labels inputs given; the pull request's labels are read
// from the server, as the event carries them.
func postingRun(t *testing.T, srv *ghserver.Server, base, head *assembly.Assembly, comment, labels string,
) (*recorder, error) {
	t.Helper()
	gh, err := githubapi.New(githubapi.Options{Token: "ghs_app", APIURL: srv.APIURL(), Owner: "acme", Repo: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	pr := pullrequest.Facts{Number: 7, Author: "dev", HeadSHA: headHex, BaseSHA: baseHex,
		Labels: slices.Clone(srv.Pulls[7].Labels)}
	r := &recorder{}
	d := Deps{GitHub: gh, Runner: r, Reviewer: givenReviewer{base, head},
		SaveReport: func(SavedReport) (string, error) { return "report.json", nil }}
	err = ReviewPullRequest(context.Background(), d, PullRequestReview{Event: "pull_request", PR: pr, Key: "cdk/review/.",
		Comment: comment, Labels: labels, Gate: Gate{CheckName: "off",
			RunURL: "https://github.com/acme/shop/actions/runs/42", Run: "42.3"}})
	return r, err
}

func postingServer(t *testing.T) *ghserver.Server {
	srv := ghserver.NewWith(t, ghserver.Options{Tokens: map[string]ghserver.Identity{"ghs_app": ghserver.AppToken}})
	srv.Pulls[7] = &ghserver.PullRequest{Number: 7, Author: "dev", HeadSHA: headHex, BaseSHA: baseHex, BaseRef: "main",
		HeadRef: "topic", Labels: []string{"team:payments"}}
	return srv
}

// comment: changes posts the review while the pull request changes something; once it changes
// nothing, the sticky comment is deleted (only cdkbot's own: a comment of another identity with
// the same marker stays) and no new one is posted, run after run. sticky keeps posting it.
func TestCommentChangesSkipsAndDeletes(t *testing.T) {
	base, changed := manyStacks(t, 3, -1), manyStacks(t, 3, 1)
	srv := postingServer(t)
	srv.Add(7, "github-actions[bot]", render.MarkerPrefix+`{"tool":"cdkbot","key":"cdk/review/."} --> pasted by another identity`)
	ours := func() int {
		n := 0
		for _, c := range srv.Comments[7] {
			if c.User == "cdk-deployer[bot]" {
				n++
			}
		}
		return n
	}
	if r, err := postingRun(t, srv, base, changed, "changes", ""); err != nil && !failure.Is(err, failure.Verdict) {
		t.Fatalf("%v\n%s", err, r)
	}
	if ours() != 1 || !strings.Contains(srv.Body(7), "1 stack changes") {
		t.Fatalf("a change is reviewed in a comment: %d comments\n%s", ours(), srv.Body(7))
	}
	for run := range 2 {
		r, err := postingRun(t, srv, base, base, "changes", "")
		if err != nil {
			t.Fatalf("%v\n%s", err, r)
		}
		if ours() != 0 || len(srv.Comments[7]) != 1 {
			t.Fatalf("run %d: a pull request that changes nothing keeps a review comment: %d of ours, %d in all",
				run, ours(), len(srv.Comments[7]))
		}
		want := []string{"deleted the review comment", "no review comment"}[run]
		if !r.has("changes nothing (comment: changes): " + want) {
			t.Errorf("run %d: %s", run, r)
		}
	}
	if n := srv.Count("issues/create-comment"); n != 1 {
		t.Errorf("%d comments created", n)
	}
	if _, err := postingRun(t, srv, base, base, "sticky", ""); err != nil {
		t.Fatal(err)
	}
	if ours() != 1 || !strings.Contains(srv.Body(7), "### ✅ no changes · cdkbot review") {
		t.Errorf("sticky posts a review that changes nothing:\n%s", srv.Body(7))
	}
}

// An input value no parser takes is refused before anything is reviewed or posted, never taken
// as the sticky comment or as labels off.
func TestPostingInputsAreRefused(t *testing.T) {
	base := manyStacks(t, 2, -1)
	for _, in := range [][2]string{{"stickyy", ""}, {"Changes", ""}, {"", "true"}} {
		srv := postingServer(t)
		_, err := postingRun(t, srv, base, base, in[0], in[1])
		if !failure.Is(err, failure.Usage) || !strings.Contains(err.Error(), "use ") {
			t.Errorf("%q: %v", in, err)
		}
		if len(srv.Calls) != 0 {
			t.Errorf("%q: GitHub was called: %q", in, srv.Calls)
		}
	}
}

// result-labels: on sets the verdict's labels and clears those that no longer hold, leaving the
// pull request's other labels alone; off (the default) touches no label.
func TestResultLabels(t *testing.T) {
	base, changed := stacksWith(t, 2, -1, true), stacksWith(t, 2, 1, true)
	// The queue of stack 1 is renamed: it is replaced (a stateful resource, so destroy-stateful
	// blocks until approved).
	srv := postingServer(t)
	if _, err := postingRun(t, srv, base, changed, "sticky", ""); !failure.Is(err, failure.Verdict) {
		t.Fatal(err)
	}
	if n := srv.Count("issues/add-labels") + srv.Count("issues/remove-label"); n != 0 {
		t.Errorf("result-labels off sent %d label requests", n)
	}
	if _, err := postingRun(t, srv, base, changed, "sticky", "on"); !failure.Is(err, failure.Verdict) {
		t.Fatal(err)
	}
	want := []string{"team:payments", pipeline.LabelNeedsApproval, pipeline.LabelDestroys}
	if got := srv.Pulls[7].Labels; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
	if _, err := postingRun(t, srv, base, changed, "sticky", "on"); !failure.Is(err, failure.Verdict) {
		t.Fatal(err)
	}
	if n := srv.Count("issues/add-labels"); n != 1 {
		t.Errorf("labels the pull request has are sent again: %d requests", n)
	}
	if _, err := postingRun(t, srv, base, base, "sticky", "on"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Pulls[7].Labels; !slices.Equal(got, []string{"team:payments"}) {
		t.Errorf("labels after the change is undone: %q", got)
	}
	for _, e := range srv.LabelEvents[7] {
		if e.Actor != "cdk-deployer[bot]" {
			t.Errorf("label event by %s", e.Actor)
		}
	}
}

// Each verdict sets its labels, from the gates and the diff.
func TestResultLabelsOfVerdicts(t *testing.T) {
	t.Parallel()
	gate := func(name string, failing, approved bool) review.Gate {
		return review.Gate{Name: name, Triggered: true, Enforced: failing || approved, Overridden: approved, Items: []string{"x"}}
	}
	for _, tc := range []struct {
		name  string
		rep   *review.Report
		label []string
	}{
		{"nothing", &review.Report{}, nil},
		{"cannot deploy", &review.Report{Gates: []review.Gate{gate(review.GateExportInUse, true, false),
			gate(review.GateDestroy, true, false)}}, []string{pipeline.LabelBlocked}},
		{"base unreadable", &review.Report{BaseUnavailable: "synth failed"}, []string{pipeline.LabelBlocked}},
		{"approvable", &review.Report{Gates: []review.Gate{gate(review.GateDestroy, true, false)}},
			[]string{pipeline.LabelNeedsApproval}},
		{"approved", &review.Report{Gates: []review.Gate{gate(review.GateDestroy, false, true)}}, nil},
		{"broadening, not enforced", &review.Report{Gates: []review.Gate{gate(review.GateSecurityBroadening, false, false)}},
			[]string{pipeline.LabelSecurity}},
	} {
		if got := ResultLabels(tc.rep); !slices.Equal(got, tc.label) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.label)
		}
	}
}

// Every comment names the commits it compared, each linked to its page, and the run (this
// attempt) that wrote it, and says how to review it again.
func TestCommentLinksCommitsAndRun(t *testing.T) {
	base, changed := manyStacks(t, 2, -1), manyStacks(t, 2, 1)
	srv := postingServer(t)
	if _, err := postingRun(t, srv, base, changed, "", ""); err != nil && !failure.Is(err, failure.Verdict) {
		t.Fatal(err)
	}
	body := srv.Body(7)
	for _, want := range []string{
		"head [<code>0123456</code>](https://github.com/acme/shop/commit/" + headHex + ")",
		"base [<code>89abcde</code>](https://github.com/acme/shop/commit/" + baseHex + ")",
		"[workflow run](https://github.com/acme/shop/actions/runs/42/attempts/3)",
		"comment <code>/cdkbot review</code> to review against the base branch as it is now",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}
}

// An annotation of a gate no approval lifts says how to go ahead, since it stands alone in the
// check run; an approvable gate's says nothing more than its item.
func TestAnnotationsSayHowToGoAhead(t *testing.T) {
	t.Parallel()
	rep := &review.Report{Gates: []review.Gate{
		{Name: review.GateExportInUse, Triggered: true, Enforced: true, Items: []string{"Data: export X is imported by App"}},
		{Name: review.GateDestroy, Triggered: true, Enforced: true, Items: []string{"Q in Data"}},
	}}
	got := annotations(Gate{}, rep)
	if len(got) != 2 || got[0].Message != "Data: export X is imported by App\n"+render.GateAdvice(review.GateExportInUse) ||
		!strings.Contains(got[0].Message, "Deploy in two steps") || got[1].Message != "Q in Data" {
		t.Errorf("%+v", got)
	}
}
