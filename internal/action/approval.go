package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pullrequest"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// ApprovalRule says what approves going ahead despite failing gates.
type ApprovalRule string

// Approval rules. In every rule the approver is someone other than the pull request's author
// with write access (write, maintain or admin): an author cannot approve their own change.
const (
	ApproveByLabel         ApprovalRule = "label"           // the override label, applied by an approver
	ApproveByReview        ApprovalRule = "review"          // an approving review of the head commit by an approver
	ApproveByLabelOrReview ApprovalRule = "label-or-review" // either
)

// ParseApprovalRule checks an input value ("" is the label rule).
func ParseApprovalRule(s string) (ApprovalRule, error) {
	switch r := ApprovalRule(s); r {
	case "":
		return ApproveByLabel, nil
	case ApproveByLabel, ApproveByReview, ApproveByLabelOrReview:
		return r, nil
	}
	return "", failure.Inputf("input approval is %q: use label, review or label-or-review", s)
}

// approvals finds who approved pull request pr under rule. ignored says, one line each, which
// would-be approvals did not count and why, so the comment can tell the author. When GitHub
// cannot say who applied a label or what access they have, that approval does not count (fail
// closed) and ignored says so.
func approvals(
	ctx context.Context, gh PullRequests, rule ApprovalRule, label string, pr pullrequest.Facts,
) (out []review.Approval, ignored []string) {
	writers := map[string]bool{}
	canWrite := func(login string) (bool, string) {
		if ok, seen := writers[login]; seen {
			return ok, ""
		}
		perm, err := gh.Permission(ctx, login)
		if err != nil {
			return false, fmt.Sprintf("The approval by %s does not count: "+
				"cdkbot could not read their access to the repository (%v)", login, err)
		}
		ok := perm == "admin" || perm == "maintain" || perm == "write"
		writers[login] = ok
		if !ok {
			return false, fmt.Sprintf("The approval by %s does not count: %s has %s access to the repository, "+
				"and an approval counts only from someone with write access", login, login, perm)
		}
		return true, ""
	}
	consider := func(by, via string, at time.Time) {
		if githubapi.SameLogin(by, pr.Author) {
			ignored = append(ignored, fmt.Sprintf("The approval by %s (%s) does not count: %s is the pull request's author; "+
				"someone else with write access must approve", by, via, by))
			return
		}
		if ok, why := canWrite(by); !ok {
			ignored = append(ignored, why)
			return
		}
		if !slices.ContainsFunc(out, func(a review.Approval) bool { return githubapi.SameLogin(a.By, by) && a.Via == via }) {
			a := review.Approval{By: by, Via: via}
			if !at.IsZero() {
				a.At = at.UTC().Format(time.RFC3339)
			}
			out = append(out, a)
		}
	}
	if (rule == ApproveByLabel || rule == ApproveByLabelOrReview) && slices.Contains(pr.Labels, label) {
		events, err := gh.LabelEvents(ctx, pr.Number)
		if err != nil {
			ignored = append(ignored, fmt.Sprintf("the label %s is on the pull request, but cdkbot could not read "+
				"who applied it (%v)", label, err))
		}
		// The label approves as its last application: a removal withdraws every earlier one,
		// and a re-application by someone who may not approve does not restore it.
		var last *githubapi.LabelEvent
		for i, e := range events {
			switch {
			case e.Label != label:
			case e.Removed:
				last = nil
			default:
				last = &events[i]
			}
		}
		switch {
		case last != nil:
			consider(last.Actor, "label "+label, last.At)
		case err == nil:
			ignored = append(ignored, fmt.Sprintf("the label %s was removed since it was applied: "+
				"its approval is withdrawn", label))
		}
	}
	if rule == ApproveByReview || rule == ApproveByLabelOrReview {
		reviews, err := gh.Reviews(ctx, pr.Number)
		if err != nil {
			ignored = append(ignored, fmt.Sprintf("cdkbot could not read the pull request's reviews (%v)", err))
		}
		// Each reviewer's latest verdict counts, for the commit it was given on.
		latest := map[string]githubapi.Review{}
		var order []string
		for _, r := range reviews {
			if r.State != "APPROVED" && r.State != "CHANGES_REQUESTED" && r.State != "DISMISSED" {
				continue
			}
			if _, ok := latest[r.User]; !ok {
				order = append(order, r.User)
			}
			latest[r.User] = r
		}
		for _, u := range order {
			r := latest[u]
			switch {
			case r.State != "APPROVED":
			case pr.HeadSHA != "" && r.CommitID != "" && r.CommitID != pr.HeadSHA:
				ignored = append(ignored, fmt.Sprintf("%s approved %s, not the head %s: approve again",
					u, commitid.Short(r.CommitID, commitid.GitHub), commitid.Short(pr.HeadSHA, commitid.GitHub)))
			default:
				consider(u, "approving review", time.Time{})
			}
		}
	}
	if len(out) > 0 {
		return out, nil // approved: what did not count no longer matters
	}
	return out, ignored
}

// boundApprovals are the approvals of pull request pr (approvals), each bound to what its
// approver saw. An approving review is of the head commit, so it covers the change as it is. A
// label says nothing of what it approved, so it covers the gate items of the review comment
// (key's) that was on the pull request when it was applied: the items a comment shows are
// recorded in its marker, with the ledger of the label approvals it counted. A label applied
// before cdkbot's comment showed anything, or that cannot be tied to a comment, covers nothing
// (fail closed), and the ignored lines say so.
//
// shown are the items the earlier review showed (its marker's), for a deploy to check that an
// approval covers all of them.
func boundApprovals(ctx context.Context, gh GitHub, rule ApprovalRule, label, key string, pr pullrequest.Facts,
) (out []review.Approval, ignored, shown []string) {
	cands, ignored := approvals(ctx, gh, rule, label, pr)
	if !slices.ContainsFunc(cands, isLabelApproval) {
		return cands, ignored, nil
	}
	prev, prevOK, err := gh.LatestOwnComment(ctx, pr.Number, func(b string) bool {
		k, ok := render.MarkerKey(b)
		return ok && k == key
	})
	var mk render.Marker
	if prevOK {
		mk, prevOK = render.ParseMarker(prev.Body)
	}
	shown = mk.Shown
	for _, a := range cands {
		if !isLabelApproval(a) {
			out = append(out, a)
			continue
		}
		at, _ := time.Parse(time.RFC3339, a.At)
		i := slices.IndexFunc(mk.Approvals, func(l review.Approval) bool {
			return githubapi.SameLogin(l.By, a.By) && l.Via == a.Via && l.At == a.At
		})
		switch {
		case err != nil:
			ignored = append(ignored, fmt.Sprintf("The approval by %s (%s) does not count: cdkbot could not read its "+
				"earlier review to tell what it approved (%v)", a.By, a.Via, err))
			continue
		case i >= 0:
			a.Covers = mk.Approvals[i].Covers // counted before: it keeps covering what it covered then
		case prevOK && !at.IsZero() && !at.Before(prev.Updated):
			a.Covers = mk.Shown // applied while this comment showed these items
			if a.Covers == nil {
				a.Covers = []string{}
			}
		default:
			ignored = append(ignored, fmt.Sprintf("The approval by %s (%s) does not count: it was given before cdkbot's "+
				"review showed what it approves; remove the label and add it again after reading the review",
				a.By, a.Via))
			continue
		}
		out = append(out, a)
	}
	if len(out) > 0 {
		return out, nil, shown
	}
	return out, ignored, shown
}

// coversAll says whether approval a covers every item of shown (a marker's Shown).
func coversAll(a review.Approval, shown []string) bool {
	if a.Covers == nil {
		return true
	}
	for _, d := range shown {
		if !slices.Contains(a.Covers, d) {
			return false
		}
	}
	return true
}

func isLabelApproval(a review.Approval) bool { return strings.HasPrefix(a.Via, "label ") }
