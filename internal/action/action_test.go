package action

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pullrequest"
	"github.com/cdkbot/cdkbot/internal/review"
)

// fakePulls answers the approval questions from tables.
type fakePulls struct {
	PullRequests
	events  []githubapi.LabelEvent
	reviews []githubapi.Review
	perms   map[string]string
	permErr error
	calls   []string
}

func (f *fakePulls) LabelEvents(context.Context, int) ([]githubapi.LabelEvent, error) {
	f.calls = append(f.calls, "events")
	return f.events, nil
}

func (f *fakePulls) Reviews(context.Context, int) ([]githubapi.Review, error) {
	f.calls = append(f.calls, "reviews")
	return f.reviews, nil
}

func (f *fakePulls) Permission(_ context.Context, login string) (string, error) {
	f.calls = append(f.calls, "permission "+login)
	if f.permErr != nil {
		return "", f.permErr
	}
	if p, ok := f.perms[login]; ok {
		return p, nil
	}
	return "none", nil
}

const label = "cdkbot/approve-destructive"

func TestApprovals(t *testing.T) {
	pr := pullrequest.Facts{Number: 1, Author: "dev", HeadSHA: "h2", Labels: []string{label}}
	perms := map[string]string{"dev": "admin", "bob": "write", "carol": "maintain", "eve": "read", "triager": "triage"}
	for _, c := range []struct {
		name    string
		rule    ApprovalRule
		pr      pullrequest.Facts
		events  []githubapi.LabelEvent
		reviews []githubapi.Review
		permErr error
		want    string // approvals
		ignored string // a fragment of the reasons, when nothing approves
	}{
		{"no label, nobody asked", ApproveByLabel, pullrequest.Facts{Number: 1, Author: "dev"}, nil, nil, nil, "[]", ""},
		{"a maintainer's label", ApproveByLabel, pr, []githubapi.LabelEvent{{Label: label, Actor: "carol"}}, nil, nil, "[{carol label " + label + "}]", ""},
		{"the author's label", ApproveByLabel, pr, []githubapi.LabelEvent{{Label: label, Actor: "dev"}}, nil, nil, "[]", "dev is the pull request's author"},
		{"the author's bot-suffixed login", ApproveByLabel, pullrequest.Facts{Number: 1, Author: "renovate[bot]", Labels: []string{label}},
			[]githubapi.LabelEvent{{Label: label, Actor: "renovate"}}, nil, nil, "[]", "author"},
		{"read access", ApproveByLabel, pr, []githubapi.LabelEvent{{Label: label, Actor: "eve"}}, nil, nil, "[]", "eve has read access"},
		{"triage is not write", ApproveByLabel, pr, []githubapi.LabelEvent{{Label: label, Actor: "triager"}}, nil, nil, "[]", "triage access"},
		{"another label", ApproveByLabel, pr, []githubapi.LabelEvent{{Label: "docs", Actor: "bob"}}, nil, nil, "[]", ""},
		{"permissions unknown: fail closed", ApproveByLabel, pr, []githubapi.LabelEvent{{Label: label, Actor: "bob"}}, nil, errors.New("502"), "[]", "could not read"},
		{"the label rule ignores reviews", ApproveByLabel, pullrequest.Facts{Number: 1, Author: "dev", HeadSHA: "h2"}, nil,
			[]githubapi.Review{{User: "bob", State: "APPROVED", CommitID: "h2"}}, nil, "[]", ""},
		{"an approving review of the head", ApproveByReview, pr, []githubapi.LabelEvent{{Label: label, Actor: "carol"}},
			[]githubapi.Review{{User: "bob", State: "APPROVED", CommitID: "h2"}}, nil, "[{bob approving review}]", ""},
		{"an approval of an older commit", ApproveByReview, pr, nil, []githubapi.Review{{User: "bob", State: "APPROVED", CommitID: "h1"}}, nil, "[]", "approve again"},
		{"approval withdrawn", ApproveByReview, pr, nil, []githubapi.Review{{User: "bob", State: "APPROVED", CommitID: "h2"},
			{User: "bob", State: "COMMENTED", CommitID: "h2"}, {User: "bob", State: "CHANGES_REQUESTED", CommitID: "h2"}}, nil, "[]", ""},
		{"either: both count", ApproveByLabelOrReview, pr, []githubapi.LabelEvent{{Label: label, Actor: "carol"}},
			[]githubapi.Review{{User: "bob", State: "APPROVED", CommitID: "h2"}}, nil, "[{carol label " + label + "} {bob approving review}]", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakePulls{events: c.events, reviews: c.reviews, perms: perms, permErr: c.permErr}
			got, ignored := approvals(context.Background(), f, c.rule, label, c.pr)
			if fmt.Sprint(got) != c.want && !(len(got) == 0 && c.want == "[]") {
				t.Errorf("approvals %v, want %s", got, c.want)
			}
			if c.ignored != "" && !strings.Contains(strings.Join(ignored, "\n"), c.ignored) {
				t.Errorf("ignored %q, want one saying %q", ignored, c.ignored)
			}
		})
	}
}

// fakeGit is a history of commits with their parents.
type fakeGit map[string][]string

func (g fakeGit) Parents(rev string) (string, []string, error) {
	p, ok := g[rev]
	if !ok {
		return "", nil, fmt.Errorf("resolve %q: object not found", rev)
	}
	return rev, p, nil
}

func (g fakeGit) MergeBase(a, b string) (string, error) {
	if _, ok := g[a]; !ok {
		return "", fmt.Errorf("resolve %q: object not found (this is a shallow clone: fetch more history)", a)
	}
	return "root", nil
}

func TestRevisions(t *testing.T) {
	git := fakeGit{"merge": {"main2", "head"}, "head": {"root"}, "main2": {"root"}, "stale": {"main1", "old-head"}, "main1": {"root"}}
	pr := pullrequest.Facts{Number: 42, HeadSHA: "head", BaseSHA: "main1"}
	for _, c := range []struct {
		name, event, checkedOut, mergeCommit string
		want                                 string // base head merge
		note, err                            string
	}{
		{"pull_request: the checkout is the test merge commit", "pull_request", "merge", "", "main2 merge merge", "", ""},
		{"issue_comment: the API's merge commit", "issue_comment", "main9", "merge", "main2 merge merge", "", ""},
		{"pull_request_target: GITHUB_SHA is the base branch, not a merge", "pull_request_target", "merge", "", "root head ", "no test merge commit", ""},
		{"a merge of another head is not this PR's", "pull_request", "stale", "", "root head ", "no test merge commit", ""},
		{"no merge commit, no history", "pull_request", "", "", "", "", "cannot tell what pull request #42 changes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := pr
			p.MergeCommitSHA = c.mergeCommit
			g := git
			if c.err != "" {
				g = fakeGit{}
			}
			base, head, merge, note, err := revisions(g, PullRequestReview{Event: c.event, CheckedOut: c.checkedOut, PR: p})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("err %v, want %q", err, c.err)
				}
				return
			}
			if got := base + " " + head + " " + merge; err != nil || got != c.want {
				t.Errorf("%q %v, want %q", got, err, c.want)
			}
			if (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
				t.Errorf("note %q, want %q", note, c.note)
			}
		})
	}
}

// recorder is a Runner that keeps what the flow reported.
type recorder struct {
	lines   []string
	outputs map[string]string
	summary string
}

func (r *recorder) Output(k, v string) {
	if r.outputs == nil {
		r.outputs = map[string]string{}
	}
	r.outputs[k] = v
}
func (r *recorder) Summary(md string) { r.summary += md }
func (r *recorder) Notice(f string, a ...any) {
	r.lines = append(r.lines, "notice: "+fmt.Sprintf(f, a...))
}
func (r *recorder) Warning(f string, a ...any) {
	r.lines = append(r.lines, "warning: "+fmt.Sprintf(f, a...))
}
func (r *recorder) Error(f string, a ...any) {
	r.lines = append(r.lines, "error: "+fmt.Sprintf(f, a...))
}
func (r *recorder) Group(string)             {}
func (r *recorder) EndGroup()                {}
func (r *recorder) has(fragment string) bool { return strings.Contains(r.String(), fragment) }
func (r *recorder) String() string           { return strings.Join(r.lines, "\n") }

// A merge queue event other than checks_requested reviews nothing.
func TestMergeGroupDestroyedIsANoOp(t *testing.T) {
	r := &recorder{}
	if err := ReviewMergeGroup(context.Background(), Deps{Runner: r}, MergeGroupReview{Action: "destroyed"}); err != nil || !r.has(`merge_group "destroyed": nothing to check`) {
		t.Errorf("%v %s", err, r)
	}
}

func TestVerdict(t *testing.T) {
	r := &recorder{}
	rep := &review.Report{OverrideLabel: label, Gates: []review.Gate{{Name: "destroy-stateful", Triggered: true, Enforced: true, Items: []string{"x"}}}}
	if err := verdict(r, rep); !errors.Is(err, ErrBlocked) || !r.has(`error: cdkbot: gate destroy-stateful blocks this change (1 item(s)); approve with the label "cdkbot/approve-destructive"`) {
		t.Errorf("%v %s", err, r)
	}
}

func TestNoDeployedForUntrustedPullRequests(t *testing.T) {
	for _, tc := range []struct {
		event string
		fork  bool
		want  bool
	}{
		{"pull_request", false, false}, {"pull_request_review", false, false},
		{"pull_request", true, true}, {"pull_request_target", false, true}, {"pull_request_target", true, true},
	} {
		if got := noDeployed(tc.event, tc.fork); got != tc.want {
			t.Errorf("%s fork=%v: %v", tc.event, tc.fork, got)
		}
	}
}
