package githubapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v60/github"
)

// ReportIssue keeps one open issue labelled label for a recurring problem (a failed deploy):
// it comments on the open one the token opened, or opens it.
func (c *Client) ReportIssue(ctx context.Context, label, title, body string) (Result, error) {
	find := func() (*github.Issue, error) {
		open, _, err := c.gh.Issues.ListByRepo(ctx, c.owner, c.repo, &github.IssueListByRepoOptions{
			State: "open", Labels: []string{label}, ListOptions: github.ListOptions{PerPage: 100},
		})
		if err != nil {
			return nil, fmt.Errorf("list open %s issues: %w", label, err)
		}
		for _, is := range open {
			if is.IsPullRequest() {
				continue
			}
			if mine, err := c.isMine(ctx, is.GetUser().GetLogin()); err != nil || mine {
				return is, err
			}
		}
		return nil, nil
	}
	is, err := find()
	if err != nil {
		return Result{}, err
	}
	if is != nil {
		cm, err := c.createComment(ctx, is.GetNumber(), body)
		if err != nil {
			return Result{}, err
		}
		return Result{Action: Updated, ID: int64(is.GetNumber()), URL: cm.GetHTMLURL()}, nil
	}
	is, err = createOnce(ctx, func() (*github.Issue, error) {
		is, _, err := c.gh.Issues.Create(ctx, c.owner, c.repo, &github.IssueRequest{
			Title: &title, Body: &body, Labels: &[]string{label},
		})
		return is, err
	}, func() (*github.Issue, bool, error) {
		is, err := find()
		return is, is != nil, err
	})
	if err != nil {
		return Result{}, tooLarge(fmt.Errorf("open an issue: %w", err))
	}
	return Result{Action: Created, ID: int64(is.GetNumber()), URL: is.GetHTMLURL()}, nil
}
