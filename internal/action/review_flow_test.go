package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pullrequest"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// flowGitHub records what the review flow asks of GitHub. The embedded interface is nil, so a
// call the flow should not make panics.
type flowGitHub struct {
	GitHub
	events   []githubapi.LabelEvent
	perms    map[string]string
	calls    []string // in order: "label-events 7", "permission bob", "upsert 7", "check cdkbot success"
	comments []upsert
	checks   []githubapi.CheckRun
	prev     *githubapi.Comment // cdkbot's review comment already on the pull request
}

func (f *flowGitHub) LatestOwnComment(_ context.Context, number int, ours func(string) bool) (githubapi.Comment, bool, error) {
	f.calls = append(f.calls, fmt.Sprintf("latest-comment %d", number))
	if f.prev == nil || !ours(f.prev.Body) {
		return githubapi.Comment{}, false, nil
	}
	return *f.prev, true, nil
}

type upsert struct {
	number int
	body   string
	ours   func(string) bool
}

func (f *flowGitHub) UpsertComment(_ context.Context, number int, body string, ours func(string) bool) (githubapi.Result, error) {
	f.calls = append(f.calls, fmt.Sprintf("upsert %d", number))
	f.comments = append(f.comments, upsert{number, body, ours})
	return githubapi.Result{Action: "created", URL: "https://github.test/c/1"}, nil
}

func (f *flowGitHub) CompleteCheckRun(_ context.Context, run githubapi.CheckRun) (string, error) {
	f.calls = append(f.calls, "check "+run.Name+" "+run.Conclusion)
	f.checks = append(f.checks, run)
	return "https://github.test/runs/1", nil
}

func (f *flowGitHub) PullRequest(_ context.Context, number int) (*githubapi.PullRequest, error) {
	f.calls = append(f.calls, fmt.Sprintf("pull-request %d", number))
	return nil, errors.New("the review flow reads the pull request from its event")
}

func (f *flowGitHub) LabelEvents(_ context.Context, number int) ([]githubapi.LabelEvent, error) {
	f.calls = append(f.calls, fmt.Sprintf("label-events %d", number))
	return f.events, nil
}

func (f *flowGitHub) Reviews(_ context.Context, number int) ([]githubapi.Review, error) {
	f.calls = append(f.calls, fmt.Sprintf("reviews %d", number))
	return nil, nil
}

func (f *flowGitHub) Permission(_ context.Context, login string) (string, error) {
	f.calls = append(f.calls, "permission "+login)
	if p, ok := f.perms[login]; ok {
		return p, nil
	}
	return "none", nil
}

// flowReviewer keeps each request and answers with review.Run over in-memory assemblies, so
// the approvals the flow found decide the gates as they do in cdkbot.
type flowReviewer struct {
	base, head *assembly.Assembly
	err        error
	reqs       []ReviewRequest
}

func (f *flowReviewer) Review(_ context.Context, req ReviewRequest) (*review.Report, error) {
	f.reqs = append(f.reqs, req)
	if f.err != nil {
		return nil, f.err
	}
	return review.Run(review.Input{Base: f.base, Head: f.head, Key: req.Key, HeadSHA: req.HeadSHA, BaseSHA: req.Base, MergeSHA: req.MergeSHA,
		Approvals: req.Approvals, Notes: req.Notes})
}

func (f *flowReviewer) UsesAssemblies() bool { return false }

// tinyAssembly is a one-stack cloud assembly whose template holds resources (logical id → type).
func tinyAssembly(t *testing.T, resources map[string]string) *assembly.Assembly {
	t.Helper()
	var rs []string
	for id, typ := range resources {
		rs = append(rs, fmt.Sprintf(`%q: {"Type": %q}`, id, typ))
	}
	slices.Sort(rs)
	fsys := fstest.MapFS{
		"manifest.json": {Data: []byte(`{"version": "55.0.0", "artifacts": {"Data": {"type": "aws:cloudformation:stack",
			"environment": "aws://123456789012/eu-west-1", "properties": {"templateFile": "Data.template.json"}}}}`)},
		"Data.template.json": {Data: []byte(`{"Resources": {` + strings.Join(rs, ", ") + `}}`)},
	}
	a, err := assembly.Load(fsys, "cdk.out")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The pull-request review drives GitHub, the runner and the report file through fakes: what it
// comments, which check run it concludes, what it asks the reviewer for and what it returns.
func TestReviewFlowPullRequest(t *testing.T) {
	base := tinyAssembly(t, map[string]string{"Orders": "AWS::DynamoDB::Table"})
	grown := tinyAssembly(t, map[string]string{"Orders": "AWS::DynamoDB::Table", "Jobs": "AWS::SQS::Queue"})
	dropped := tinyAssembly(t, map[string]string{"Jobs": "AWS::SQS::Queue"}) // destroys the table: destroy-stateful fails
	reviewerDown := errors.New("synthesize head: exit status 1")
	const key = "cdk/review/."
	// cdkbot's earlier comment on the table's destruction, stored at t0; bob labels at t1.
	t0, t1 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 20, 10, 5, 0, 0, time.UTC)
	shown, err := review.Run(review.Input{Base: base, Head: dropped, Key: key, HeadSHA: "head"})
	if err != nil {
		t.Fatal(err)
	}
	earlier := &githubapi.Comment{Body: render.MarkerComment(shown), Updated: t0}
	covers := fmt.Sprint(shown.Shown())
	for _, c := range []struct {
		name      string
		event     string
		fork      bool
		labels    []string
		events    []githubapi.LabelEvent
		prev      *githubapi.Comment
		head      *assembly.Assembly
		reviewErr error

		wantErr        error
		wantCalls      string // GitHub calls, in order
		wantNoDeployed bool
		wantApprovals  string
		wantNote       string // a fragment of the request's notes
		wantFailed     bool   // the saved report's verdict
		wantOutputs    string // has-changes destroys report-file
		wantLog        string // a fragment of the runner's annotations
	}{
		{name: "a clean report: comment, successful check run, outputs", event: "pull_request", head: grown,
			wantCalls: "upsert 7, check cdkbot success", wantApprovals: "[]", wantOutputs: "true 0 /tmp/cdkbot-report.json",
			wantLog: "notice: cdkbot: check run cdkbot: success"},
		{name: "a failing gate blocks", event: "pull_request", head: dropped,
			wantErr: ErrBlocked, wantCalls: "upsert 7, check cdkbot failure", wantApprovals: "[]", wantFailed: true, wantOutputs: "true 1 /tmp/cdkbot-report.json",
			wantLog: "error: cdkbot: gate destroy-stateful blocks this change (1 item(s))"},
		{name: "the override label from a writer approves what the review showed", event: "pull_request", head: dropped,
			labels: []string{review.DefaultOverrideLabel}, prev: earlier,
			events: []githubapi.LabelEvent{{Label: "docs", Actor: "eve", At: t0},
				{Label: review.DefaultOverrideLabel, Actor: "bob", At: t1}},
			wantCalls:     "label-events 7, permission bob, latest-comment 7, upsert 7, check cdkbot success",
			wantApprovals: "[{bob label " + review.DefaultOverrideLabel + " at 2026-11-20T10:05:00Z covering " + covers + "}]",
			wantOutputs:   "true 1 /tmp/cdkbot-report.json"},
		{name: "a label applied before cdkbot's review showed anything approves nothing", event: "pull_request",
			head: dropped, labels: []string{review.DefaultOverrideLabel},
			events:  []githubapi.LabelEvent{{Label: review.DefaultOverrideLabel, Actor: "bob", At: t1}},
			wantErr: ErrBlocked, wantCalls: "label-events 7, permission bob, latest-comment 7, upsert 7, check cdkbot failure",
			wantApprovals: "[]", wantNote: "it was given before cdkbot's review showed what it approves",
			wantFailed: true, wantOutputs: "true 1 /tmp/cdkbot-report.json"},
		{name: "the author's own label does not approve", event: "pull_request", head: dropped, labels: []string{review.DefaultOverrideLabel},
			events:    []githubapi.LabelEvent{{Label: review.DefaultOverrideLabel, Actor: "dev"}},
			wantErr:   ErrBlocked,
			wantCalls: "label-events 7, upsert 7, check cdkbot failure", wantApprovals: "[]", wantNote: "dev is the pull request's author",
			wantFailed: true, wantOutputs: "true 1 /tmp/cdkbot-report.json"},
		{name: "a fork: nothing deployed is read, the report is saved instead of posted", event: "pull_request", fork: true, head: dropped,
			wantErr: ErrBlocked, wantNoDeployed: true, wantApprovals: "[]", wantFailed: true, wantOutputs: "true 1 /tmp/cdkbot-report.json",
			wantLog: "comes from a fork, whose token cannot comment. The review is in the job summary and in /tmp/cdkbot-report.json"},
		{name: "the reviewer fails: its error, no verdict posted", event: "pull_request", head: grown, reviewErr: reviewerDown,
			wantErr: reviewerDown, wantApprovals: "[]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &flowGitHub{events: c.events, prev: c.prev, perms: map[string]string{"dev": "admin", "bob": "write", "eve": "read"}}
			r := &recorder{}
			rv := &flowReviewer{base: base, head: c.head, err: c.reviewErr}
			var saved []SavedReport
			d := Deps{GitHub: gh, Runner: r, Reviewer: rv, Git: fakeGit{"merge": {"main2", "head"}},
				SaveReport: func(s SavedReport) (string, error) {
					saved = append(saved, s)
					return "/tmp/cdkbot-report.json", nil
				}}
			in := PullRequestReview{Event: c.event, CheckedOut: "merge", Key: key, Gate: Gate{Approval: ApproveByLabel},
				PR: pullrequest.Facts{Number: 7, Author: "dev", HeadSHA: "head", BaseSHA: "main1", Labels: c.labels, Fork: c.fork}}

			err := ReviewPullRequest(context.Background(), d, in)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("err %v, want %v\n%s", err, c.wantErr, r)
			}
			if got := strings.Join(gh.calls, ", "); got != c.wantCalls {
				t.Errorf("GitHub calls %q, want %q", got, c.wantCalls)
			}

			// What the reviewer was asked: the test merge commit against its first parent.
			if len(rv.reqs) != 1 {
				t.Fatalf("%d review requests, want 1", len(rv.reqs))
			}
			req := rv.reqs[0]
			if req.Base != "main2" || req.Head != "merge" || req.MergeSHA != "merge" || req.HeadSHA != "head" || req.Key != key || req.NoSynth {
				t.Errorf("request %+v", req)
			}
			if req.NoDeployed != c.wantNoDeployed {
				t.Errorf("NoDeployed %v, want %v", req.NoDeployed, c.wantNoDeployed)
			}
			if got := fmt.Sprint(req.Approvals); got != c.wantApprovals {
				t.Errorf("approvals %s, want %s", got, c.wantApprovals)
			}
			if notes := strings.Join(req.Notes, "\n"); c.wantNote != "" && !strings.Contains(notes, c.wantNote) || c.wantNote == "" && notes != "" {
				t.Errorf("notes %q, want %q", notes, c.wantNote)
			}

			if c.reviewErr != nil {
				if len(saved) != 0 || len(r.outputs) != 0 || r.summary != "" {
					t.Errorf("after a failed review: saved %d, outputs %v, summary %q", len(saved), r.outputs, r.summary)
				}
				return
			}

			// The report file, written on every review, holds the comment with cdkbot's marker.
			if len(saved) != 1 {
				t.Fatalf("%d reports saved, want 1", len(saved))
			}
			s := saved[0]
			if m, ok := render.ParseMarker(s.Comment); !ok || m.Key != key || m.HeadSHA != "head" || m.MergeSHA != "merge" ||
				s.PullRequest != 7 || s.Key != key || s.Failed != c.wantFailed || len(s.Review) == 0 {
				t.Errorf("saved report #%d key %q failed %v, marker %+v %v", s.PullRequest, s.Key, s.Failed, m, ok)
			}
			if got := r.outputs["has-changes"] + " " + r.outputs["destroys"] + " " + r.outputs["report-file"]; got != c.wantOutputs {
				t.Errorf("outputs %v, want %s", r.outputs, c.wantOutputs)
			}
			if !strings.HasPrefix(r.summary, render.MarkerPrefix) {
				t.Errorf("job summary %.80q", r.summary)
			}

			// One sticky comment on the pull request, which the flow would edit on the next run.
			if slices.Contains(gh.calls, "upsert 7") {
				cm := gh.comments[0]
				if cm.body != s.Comment {
					t.Errorf("the comment posted is not the one saved")
				}
				other := render.MarkerComment(&review.Report{Key: "cdk/review/other"})
				if !cm.ours(cm.body) || cm.ours(other) || cm.ours("LGTM") {
					t.Errorf("the comment's matcher: ours %v, another key %v, no marker %v", cm.ours(cm.body), cm.ours(other), cm.ours("LGTM"))
				}
			}
			// The check run is on the pull request's head, without the marker the deploy reads.
			for _, run := range gh.checks {
				if run.HeadSHA != "head" || run.ExternalID != key+"@head" || strings.HasPrefix(run.Summary, render.MarkerPrefix) || run.Title == "" {
					t.Errorf("check run %+v", run)
				}
				if wantAnn := c.wantFailed || c.wantApprovals != "[]"; (len(run.Annotations) > 0) != wantAnn {
					t.Errorf("annotations %+v", run.Annotations)
				}
			}
			if c.wantLog != "" && !r.has(c.wantLog) {
				t.Errorf("log lacks %q:\n%s", c.wantLog, r)
			}
		})
	}
}

// assemblyOf is a one-stack assembly with the template given.
func assemblyOf(t *testing.T, template string) *assembly.Assembly {
	t.Helper()
	a, err := assembly.Load(fstest.MapFS{
		"manifest.json": {Data: []byte(`{"version": "55.0.0", "artifacts": {"Data": {"type": "aws:cloudformation:stack",
			"environment": "aws://123456789012/eu-west-1", "properties": {"templateFile": "Data.template.json"}}}}`)},
		"Data.template.json": {Data: []byte(template)},
	}, "cdk.out")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// An approval is bound to what its approver saw: removing the label withdraws it (a re-apply by
// the author or a triage user does not restore it), and a label applied to one review does not
// cover what a later push adds — the comment names the new items and asks to re-approve.
func TestReviewFlowApprovalsAreBound(t *testing.T) {
	const key, label = "cdk/review/.", review.DefaultOverrideLabel
	base := tinyAssembly(t, map[string]string{"Orders": "AWS::DynamoDB::Table"})
	dropped := tinyAssembly(t, map[string]string{"Jobs": "AWS::SQS::Queue"})
	adminToo := assemblyOf(t, `{"Resources": {"Jobs": {"Type": "AWS::SQS::Queue"},
		"Admin": {"Type": "AWS::IAM::Policy", "Properties": {"PolicyName": "all", "Roles": ["r"],
			"PolicyDocument": {"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"},
				{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}]}}}}}`)
	at := func(min int) time.Time { return time.Date(2026, 11, 20, 10, min, 0, 0, time.UTC) }
	// cdkbot's comment on the table's destruction (t0), which bob approved (t1) and the next
	// review recorded in its ledger (t2).
	first, err := review.Run(review.Input{Base: base, Head: dropped, Key: key, HeadSHA: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	approvedThen := review.Approval{By: "bob", Via: "label " + label, At: at(1).Format(time.RFC3339), Covers: first.Shown()}
	second, err := review.Run(review.Input{Base: base, Head: dropped, Key: key, HeadSHA: "h1",
		Approvals: []review.Approval{approvedThen}})
	if err != nil || second.Failed() {
		t.Fatalf("the approval did not cover what bob saw: %v %+v", err, second.Gates)
	}
	ledger := &githubapi.Comment{Body: render.MarkerComment(second), Updated: at(2)}

	for _, c := range []struct {
		name      string
		head      *assembly.Assembly
		events    []githubapi.LabelEvent
		wantNote  string
		wantInBox string // in the comment
	}{
		{"removed, then re-applied by the author", dropped, []githubapi.LabelEvent{
			{Label: label, Actor: "bob", At: at(1)}, {Label: label, Actor: "bob", Removed: true, At: at(3)},
			{Label: label, Actor: "dev", At: at(4)}}, "dev is the pull request's author", "Blocked by `destroy-stateful`"},
		{"removed, then re-applied by a triage user", dropped, []githubapi.LabelEvent{
			{Label: label, Actor: "bob", At: at(1)}, {Label: label, Actor: "bob", Removed: true, At: at(3)},
			{Label: label, Actor: "eve", At: at(4)}}, "eve has read access", "Blocked by `destroy-stateful`"},
		{"the author pushes more after the approval", adminToo, []githubapi.LabelEvent{
			{Label: label, Actor: "bob", At: at(1)}}, "",
			"**Blocked by `security-broadening`**: new since the approval (approved by bob \\(label " + label + "\\))"},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &flowGitHub{events: c.events, prev: ledger, perms: map[string]string{"dev": "admin", "bob": "write", "eve": "read"}}
			r := &recorder{}
			rv := &flowReviewer{base: base, head: c.head}
			d := Deps{GitHub: gh, Runner: r, Reviewer: rv, Git: fakeGit{"merge": {"main2", "head"}},
				SaveReport: func(SavedReport) (string, error) { return "/tmp/r.json", nil }}
			in := PullRequestReview{Event: "pull_request", CheckedOut: "merge", Key: key, Gate: Gate{Approval: ApproveByLabel},
				PR: pullrequest.Facts{Number: 7, Author: "dev", HeadSHA: "head", BaseSHA: "main1", Labels: []string{label}}}
			err := ReviewPullRequest(context.Background(), d, in)
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("not blocked: %v\n%s", err, r)
			}
			if notes := strings.Join(rv.reqs[0].Notes, "\n"); !strings.Contains(notes, c.wantNote) {
				t.Errorf("notes %q, want %q", notes, c.wantNote)
			}
			if len(gh.comments) != 1 || !strings.Contains(gh.comments[0].body, c.wantInBox) {
				t.Errorf("comment lacks %q:\n%s", c.wantInBox, gh.comments[0].body)
			}
			if len(gh.checks) != 1 || gh.checks[0].Conclusion != "failure" {
				t.Errorf("check runs %+v", gh.checks)
			}
		})
	}
}
