package githubapi

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v60/github"
)

// Action says what UpsertComment did.
type Action string

// Comment actions.
const (
	Created   Action = "created"
	Updated   Action = "updated"
	Unchanged Action = "unchanged"
)

// Result of UpsertComment.
type Result struct {
	Action    Action
	ID        int64
	URL       string
	Minimized int // older duplicates hidden
}

// UpsertComment keeps one comment on issue or pull request number: among ALL pages, the
// comments written by the token's own identity (anyone can paste a marker) for which ours is
// true; it edits the newest in place (or leaves it when the body is the same), creates one when
// none exists, and minimizes older duplicates.
func (c *Client) UpsertComment(
	ctx context.Context, number int, body string, ours func(body string) bool,
) (Result, error) {
	mine, err := c.ownComments(ctx, number, ours)
	if err != nil {
		return Result{}, err
	}
	if len(mine) == 0 {
		cm, err := c.createComment(ctx, number, body)
		if err != nil {
			return Result{}, err
		}
		return Result{Action: Created, ID: cm.GetID(), URL: cm.GetHTMLURL()}, nil
	}
	newest := mine[len(mine)-1]
	res := Result{Action: Unchanged, ID: newest.GetID(), URL: newest.GetHTMLURL()}
	if newest.GetBody() != body {
		cm, _, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, newest.GetID(), &github.IssueComment{Body: &body})
		if err != nil {
			return Result{}, tooLarge(fmt.Errorf("edit comment %d: %w", newest.GetID(), err))
		}
		res.Action, res.URL = Updated, cm.GetHTMLURL()
	}
	for _, old := range mine[:len(mine)-1] {
		if err := c.Minimize(ctx, old.GetNodeID()); err != nil {
			return res, err
		}
		res.Minimized++
	}
	return res, nil
}

// DeleteOwnComments deletes the comments on issue or pull request number written by the token's
// own identity for which ours is true (anyone can paste a marker: only its own are deleted), and
// returns how many. One already gone (deleted meanwhile, or by a request whose answer was lost)
// counts as deleted.
func (c *Client) DeleteOwnComments(ctx context.Context, number int, ours func(body string) bool) (int, error) {
	mine, err := c.ownComments(ctx, number, ours)
	if err != nil {
		return 0, err
	}
	for i, cm := range mine {
		if _, err := c.gh.Issues.DeleteComment(ctx, c.owner, c.repo, cm.GetID()); err != nil && !notFound(err) {
			return i, fmt.Errorf("delete comment %d: %w", cm.GetID(), err)
		}
	}
	return len(mine), nil
}

// createComment comments on number; when the answer is lost, a comment of ours with the same
// body found afterwards is the one GitHub stored, so it is not posted twice.
func (c *Client) createComment(ctx context.Context, number int, body string) (*github.IssueComment, error) {
	cm, err := createOnce(ctx, func() (*github.IssueComment, error) {
		cm, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, number, &github.IssueComment{Body: &body})
		return cm, err
	}, func() (*github.IssueComment, bool, error) {
		now, err := c.ownComments(ctx, number, func(b string) bool { return b == body })
		if err != nil || len(now) == 0 {
			return nil, false, err
		}
		return now[len(now)-1], true, nil
	})
	if err != nil {
		return nil, tooLarge(fmt.Errorf("comment on #%d: %w", number, err))
	}
	return cm, nil
}

// Minimize hides a comment as outdated.
func (c *Client) Minimize(ctx context.Context, nodeID string) error {
	return c.graphql(ctx, "minimize comment "+nodeID,
		"mutation($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: OUTDATED}) "+
			"{ minimizedComment { isMinimized } } }",
		map[string]any{"id": nodeID}, nil)
}

// ownComments lists, oldest first across all pages, the comments of issue or pull request
// number written by the token's own identity that ours accepts.
func (c *Client) ownComments(
	ctx context.Context, number int, ours func(body string) bool,
) ([]*github.IssueComment, error) {
	all, err := listAll(func(page int) ([]*github.IssueComment, *github.Response, error) {
		return c.gh.Issues.ListComments(ctx, c.owner, c.repo, number, &github.IssueListCommentsOptions{
			ListOptions: github.ListOptions{PerPage: 100, Page: page}})
	})
	if err != nil {
		return nil, fmt.Errorf("list comments of #%d: %w", number, err)
	}
	var mine []*github.IssueComment
	for _, cm := range all {
		if !ours(cm.GetBody()) {
			continue
		}
		ok, err := c.isMine(ctx, cm.GetUser().GetLogin())
		if err != nil {
			return nil, err
		}
		if ok {
			mine = append(mine, cm)
		}
	}
	return mine, nil
}

// OwnCommentBodies returns the bodies of the token's own comments on number that ours accepts,
// oldest first: the review markers a deploy compares against.
func (c *Client) OwnCommentBodies(ctx context.Context, number int, ours func(body string) bool) ([]string, error) {
	cms, err := c.ownComments(ctx, number, ours)
	var out []string
	for _, cm := range cms {
		out = append(out, cm.GetBody())
	}
	return out, err
}

// Comment is one of cdkbot's comments as GitHub stored it.
type Comment struct {
	Body string
	// Updated is when GitHub last stored the body (its clock, not the client's): what readers
	// saw before that moment was an earlier body.
	Updated time.Time
}

// LatestOwnComment is the newest comment on number written by the token's own identity for
// which ours is true; ok is false when there is none.
func (c *Client) LatestOwnComment(
	ctx context.Context, number int, ours func(body string) bool,
) (cm Comment, ok bool, err error) {
	mine, err := c.ownComments(ctx, number, ours)
	if err != nil || len(mine) == 0 {
		return Comment{}, false, err
	}
	newest := mine[len(mine)-1]
	updated := newest.GetUpdatedAt().Time
	if updated.IsZero() {
		updated = newest.GetCreatedAt().Time
	}
	return Comment{Body: newest.GetBody(), Updated: updated}, true, nil
}
