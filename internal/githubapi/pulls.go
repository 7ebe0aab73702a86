package githubapi

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/cdkbot/cdkbot/internal/pullrequest"
)

// PullRequest is what a review needs to know about a pull request: its facts, and what the API
// says besides the event.
type PullRequest struct {
	pullrequest.Facts // MergeCommitSHA is the test merge commit (refs/pull/N/merge) while Mergeable is true
	BaseRef           string
	Mergeable         *bool // nil while GitHub is still computing it
}

// PullRequest reads a pull request (for events that name it without its details, such as a
// comment on it).
func (c *Client) PullRequest(ctx context.Context, number int) (*PullRequest, error) {
	pr, _, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return nil, fmt.Errorf("read pull request #%d: %w", number, err)
	}
	out := &PullRequest{
		Facts: pullrequest.Facts{
			Number: pr.GetNumber(), Author: pr.GetUser().GetLogin(),
			HeadSHA: pr.GetHead().GetSHA(), BaseSHA: pr.GetBase().GetSHA(), MergeCommitSHA: pr.GetMergeCommitSHA(),
			Fork: pr.GetHead().GetRepo().GetFullName() != pr.GetBase().GetRepo().GetFullName(),
		},
		BaseRef: pr.GetBase().GetRef(), Mergeable: pr.Mergeable,
	}
	for _, l := range pr.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out, nil
}

// OpenPullRequestsFor lists the open pull requests whose head is branch of owner's repository
// (a fork's pull request, which a workflow_run event does not name).
func (c *Client) OpenPullRequestsFor(ctx context.Context, owner, branch string) ([]PullRequest, error) {
	prs, _, err := c.gh.PullRequests.List(ctx, c.owner, c.repo, &github.PullRequestListOptions{
		State: "open", Head: owner + ":" + branch, ListOptions: github.ListOptions{PerPage: 100},
	})
	if err != nil {
		return nil, fmt.Errorf("find the pull request of %s:%s: %w", owner, branch, err)
	}
	var out []PullRequest
	for _, pr := range prs {
		out = append(out, PullRequest{
			Facts: pullrequest.Facts{
				Number: pr.GetNumber(), Author: pr.GetUser().GetLogin(),
				HeadSHA: pr.GetHead().GetSHA(), BaseSHA: pr.GetBase().GetSHA(),
				Fork: pr.GetHead().GetRepo().GetFullName() != pr.GetBase().GetRepo().GetFullName(),
			},
			BaseRef: pr.GetBase().GetRef(),
		})
	}
	return out, nil
}

// LabelEvent is one "labeled" or "unlabeled" event of an issue or pull request: who applied
// (or removed) which label, and when.
type LabelEvent struct {
	Label   string
	Actor   string
	Removed bool      // "unlabeled"
	At      time.Time // GitHub's clock
}

// String reads as the event does in logs and tests: label and actor, and whether it was a removal.
func (e LabelEvent) String() string {
	if e.Removed {
		return "{" + e.Label + " " + e.Actor + " removed}"
	}
	return "{" + e.Label + " " + e.Actor + "}"
}

// LabelEvents lists, oldest first across all pages, who applied or removed which label on
// number.
func (c *Client) LabelEvents(ctx context.Context, number int) ([]LabelEvent, error) {
	all, err := listAll(func(page int) ([]*github.IssueEvent, *github.Response, error) {
		return c.gh.Issues.ListIssueEvents(ctx, c.owner, c.repo, number, &github.ListOptions{PerPage: 100, Page: page})
	})
	if err != nil {
		return nil, fmt.Errorf("list the events of #%d: %w", number, err)
	}
	var out []LabelEvent
	for _, e := range all {
		if e.GetEvent() == "labeled" || e.GetEvent() == "unlabeled" {
			out = append(out, LabelEvent{Label: e.GetLabel().GetName(), Actor: e.GetActor().GetLogin(),
				Removed: e.GetEvent() == "unlabeled", At: e.GetCreatedAt().Time})
		}
	}
	return out, nil
}

// Review is a pull request review's verdict.
type Review struct {
	User     string
	State    string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED
	CommitID string
}

// Reviews lists the reviews of pull request number, oldest first across all pages.
func (c *Client) Reviews(ctx context.Context, number int) ([]Review, error) {
	all, err := listAll(func(page int) ([]*github.PullRequestReview, *github.Response, error) {
		return c.gh.PullRequests.ListReviews(ctx, c.owner, c.repo, number, &github.ListOptions{PerPage: 100, Page: page})
	})
	if err != nil {
		return nil, fmt.Errorf("list the reviews of #%d: %w", number, err)
	}
	var out []Review
	for _, r := range all {
		out = append(out, Review{User: r.GetUser().GetLogin(), State: r.GetState(), CommitID: r.GetCommitID()})
	}
	return out, nil
}

// Permission is login's permission on the repository: admin, maintain, write, triage, read or
// none (role_name, which names maintain and triage; permission folds them into write and read).
func (c *Client) Permission(ctx context.Context, login string) (string, error) {
	p, _, err := c.gh.Repositories.GetPermissionLevel(ctx, c.owner, c.repo, login)
	if err != nil {
		return "", fmt.Errorf("read the permission of %s: %w", login, err)
	}
	if role := p.GetUser().GetRoleName(); role != "" {
		return role, nil
	}
	return p.GetPermission(), nil
}

// MergedPullRequest is a pull request a pushed commit came from: its facts (MergeCommitSHA is
// the commit its merge made), its title and the branch it merged into.
type MergedPullRequest struct {
	pullrequest.Facts
	Title   string
	BaseRef string
}

// MergedPullRequests returns the pull requests merged into base whose merge commit is one of
// shas (a push can carry several merges when a concurrency group cancelled runs in between),
// each once, in the order of shas.
func (c *Client) MergedPullRequests(ctx context.Context, base string, shas []string) ([]MergedPullRequest, error) {
	seen := map[int]bool{}
	var out []MergedPullRequest
	for _, sha := range shas {
		prs, _, err := c.gh.PullRequests.ListPullRequestsWithCommit(ctx, c.owner, c.repo, sha,
			&github.ListOptions{PerPage: 100})
		if err != nil {
			return out, fmt.Errorf("find the pull request of commit %s: %w", sha, err)
		}
		for _, pr := range prs {
			if pr.MergedAt == nil || pr.GetBase().GetRef() != base || seen[pr.GetNumber()] {
				continue
			}
			seen[pr.GetNumber()] = true
			m := MergedPullRequest{
				Facts: pullrequest.Facts{
					Number: pr.GetNumber(), Author: pr.GetUser().GetLogin(),
					HeadSHA: pr.GetHead().GetSHA(), MergeCommitSHA: pr.GetMergeCommitSHA(),
					// A deleted fork has no head repository: counted a fork (fail closed).
					Fork: pr.GetHead().GetRepo().GetFullName() != pr.GetBase().GetRepo().GetFullName(),
				},
				Title: pr.GetTitle(), BaseRef: pr.GetBase().GetRef(),
			}
			for _, l := range pr.Labels {
				m.Labels = append(m.Labels, l.GetName())
			}
			out = append(out, m)
		}
	}
	return out, nil
}
