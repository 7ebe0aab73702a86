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

// OwnComment is one of the token's own comments as the deploy reads it: its body, and who last
// edited it when that was not the token's identity. A collaborator with write access can edit
// any comment, and REST still names the token's identity its author: only GraphQL's editor tells.
type OwnComment struct {
	Body string
	// EditedBy is the login of the last editor when another identity edited the comment last
	// ("ghost" when GitHub no longer knows the account); "" when nobody else did.
	EditedBy string
}

// OwnCommentsWithEditors returns the token's own comments on pull request number that ours
// accepts, oldest first, each with who last edited it when that was someone else. The bodies are
// read first (REST) and their editors after (GraphQL, PullRequest.comments), so an edit made
// before a body was read shows; a comment read whose editor GraphQL does not answer for is an
// error, never an unedited comment.
func (c *Client) OwnCommentsWithEditors(
	ctx context.Context, number int, ours func(body string) bool,
) ([]OwnComment, error) {
	mine, err := c.ownComments(ctx, number, ours)
	if err != nil || len(mine) == 0 {
		return nil, err
	}
	login, err := c.Login(ctx)
	if err != nil {
		return nil, err
	}
	editors, err := c.commentEditors(ctx, number)
	if err != nil {
		return nil, err
	}
	out := make([]OwnComment, 0, len(mine))
	for _, cm := range mine {
		e, ok := editors[cm.GetNodeID()]
		if !ok || cm.GetNodeID() == "" {
			return nil, fmt.Errorf("who last edited comment %d of #%d: GitHub's GraphQL API did not list it",
				cm.GetID(), number)
		}
		oc := OwnComment{Body: cm.GetBody()}
		if e.LastEditedAt != nil || e.Editor != nil {
			switch {
			case e.Editor == nil || e.Editor.Login == "":
				oc.EditedBy = "ghost" // edited by an account GitHub no longer shows
			case !SameLogin(e.Editor.Login, login):
				oc.EditedBy = e.Editor.Login
			}
		}
		out = append(out, oc)
	}
	return out, nil
}

// commentEdit is what GraphQL says of one comment's last edit.
type commentEdit struct {
	ID           string  `json:"id"`
	LastEditedAt *string `json:"lastEditedAt"`
	Editor       *struct {
		Login string `json:"login"`
	} `json:"editor"`
}

// commentEditors reads, by node id, every comment of pull request number's last edit: all pages
// of PullRequest.comments (at most maxPages).
func (c *Client) commentEditors(ctx context.Context, number int) (map[string]commentEdit, error) {
	const query = "query($owner: String!, $repo: String!, $number: Int!, $after: String) { " +
		"repository(owner: $owner, name: $repo) { pullRequest(number: $number) { " +
		"comments(first: 100, after: $after) { pageInfo { hasNextPage endCursor } " +
		"nodes { id lastEditedAt editor { login } } } } } }"
	out := map[string]commentEdit{}
	var after any
	for page := 1; ; page++ {
		if page > maxPages {
			return nil, errTooManyPages
		}
		var data struct {
			Repository *struct {
				PullRequest *struct {
					Comments struct {
						PageInfo struct {
							HasNextPage bool   `json:"hasNextPage"`
							EndCursor   string `json:"endCursor"`
						} `json:"pageInfo"`
						Nodes []commentEdit `json:"nodes"`
					} `json:"comments"`
				} `json:"pullRequest"`
			} `json:"repository"`
		}
		err := c.graphql(ctx, fmt.Sprintf("who last edited the comments of #%d (GraphQL)", number), query,
			map[string]any{"owner": c.owner, "repo": c.repo, "number": number, "after": after}, &data)
		if err != nil {
			return nil, err
		}
		if data.Repository == nil || data.Repository.PullRequest == nil {
			return nil, fmt.Errorf("who last edited the comments of #%d (GraphQL): no such pull request", number)
		}
		cs := data.Repository.PullRequest.Comments
		for _, n := range cs.Nodes {
			out[n.ID] = n
		}
		if !cs.PageInfo.HasNextPage {
			return out, nil
		}
		if cs.PageInfo.EndCursor == "" {
			return nil, fmt.Errorf("who last edited the comments of #%d (GraphQL): a next page without a cursor", number)
		}
		after = cs.PageInfo.EndCursor
	}
}
