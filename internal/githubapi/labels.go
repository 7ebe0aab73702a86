package githubapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-github/v60/github"
)

// AddLabels puts labels on issue or pull request number (GitHub creates those the repository does
// not have yet). Adding a label the issue has changes nothing, so the request is sent again
// whatever happened to it.
func (c *Client) AddLabels(ctx context.Context, number int, labels []string) error {
	if len(labels) == 0 {
		return nil
	}
	// Sent as {"labels": [...]}, the shape GitHub's description of the operation takes; go-github's
	// AddLabelsToIssue sends a bare list, which the description no longer accepts.
	req, err := c.gh.NewRequest(http.MethodPost, fmt.Sprintf("repos/%s/%s/issues/%d/labels", c.owner, c.repo, number),
		map[string][]string{"labels": labels})
	if err != nil {
		return err
	}
	if _, err := c.gh.Do(idempotent(ctx), req, nil); err != nil {
		return fmt.Errorf("label #%d %v: %w", number, labels, err)
	}
	return nil
}

// RemoveLabel takes label off issue or pull request number; a label it does not have (removed
// meanwhile, or by a request whose answer was lost) is no error.
func (c *Client) RemoveLabel(ctx context.Context, number int, label string) error {
	_, err := c.gh.Issues.RemoveLabelForIssue(ctx, c.owner, c.repo, number, label)
	if notFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove label %s from #%d: %w", label, number, err)
	}
	return nil
}

// notFound is true for GitHub's 404: what is to be removed is not there.
func notFound(err error) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusNotFound
}
