package action

import (
	"context"
	"fmt"
	"slices"

	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pullrequest"
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
	consider := func(by, via string) {
		if githubapi.SameLogin(by, pr.Author) {
			ignored = append(ignored, fmt.Sprintf("The approval by %s (%s) does not count: "+
				"%s is the pull request's author; someone else with write access must approve", by, via, by))
			return
		}
		if ok, why := canWrite(by); !ok {
			ignored = append(ignored, why)
			return
		}
		if !slices.ContainsFunc(out, func(a review.Approval) bool { return githubapi.SameLogin(a.By, by) && a.Via == via }) {
			out = append(out, review.Approval{By: by, Via: via})
		}
	}
	if (rule == ApproveByLabel || rule == ApproveByLabelOrReview) && slices.Contains(pr.Labels, label) {
		events, err := gh.LabelEvents(ctx, pr.Number)
		if err != nil {
			ignored = append(ignored, fmt.Sprintf(
				"the label %s is on the pull request, but cdkbot could not read who applied it (%v)", label, err))
		}
		var actors []string
		for _, e := range events {
			if e.Label == label && !slices.Contains(actors, e.Actor) {
				actors = append(actors, e.Actor)
			}
		}
		for _, a := range actors {
			consider(a, "label "+label)
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
				consider(u, "approving review")
			}
		}
	}
	if len(out) > 0 {
		return out, nil // approved: what did not count no longer matters
	}
	return out, ignored
}
