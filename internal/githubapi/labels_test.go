package githubapi

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

// Labels are set and cleared through requests GitHub describes (the server validates each);
// removing a label the pull request does not have is no error, so a verdict's labels can be
// cleared whatever happened since the event was sent.
func TestLabels(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Pulls[7] = &ghserver.PullRequest{Number: 7, Author: "dev", HeadSHA: "h", Labels: []string{"keep-me"}}
	var sleeps []time.Duration
	c := client(t, srv, token, &sleeps)
	ctx := context.Background()
	if err := c.AddLabels(ctx, 7, []string{"cdkbot:blocked", "cdkbot:security"}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddLabels(ctx, 7, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveLabel(ctx, 7, "cdkbot:security"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveLabel(ctx, 7, "cdkbot:destroys"); err != nil {
		t.Errorf("removing a label the pull request lacks: %v", err)
	}
	if got := srv.Pulls[7].Labels; !slices.Equal(got, []string{"keep-me", "cdkbot:blocked"}) {
		t.Errorf("labels %q", got)
	}
	if n := srv.Count("issues/add-labels"); n != 1 {
		t.Errorf("add-labels sent %d times; an empty list sends nothing", n)
	}
	if err := c.RemoveLabel(ctx, 99, "cdkbot:blocked"); err != nil {
		t.Errorf("a pull request that is gone: %v", err)
	}
}

// Only the token's own comments that ours accepts are deleted: another identity's comment with
// the same marker stays, and so does the token's other comment.
func TestDeleteOwnComments(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Add(7, "cdk-deployer[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> another bot's comment with our marker")
	srv.Add(7, "github-actions[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> ours")
	srv.Add(7, "github-actions[bot]", "a comment of ours without the marker")
	var sleeps []time.Duration
	c := client(t, srv, token, &sleeps)
	n, err := c.DeleteOwnComments(context.Background(), 7, ours)
	if err != nil || n != 1 {
		t.Fatalf("deleted %d: %v", n, err)
	}
	var left []string
	for _, cm := range srv.Comments[7] {
		left = append(left, cm.Body)
	}
	if !slices.Equal(left, []string{"<!-- cdkbot:{\"key\":\"k\"} --> another bot's comment with our marker",
		"a comment of ours without the marker"}) {
		t.Errorf("left %q", left)
	}
	if n, err := c.DeleteOwnComments(context.Background(), 7, ours); err != nil || n != 0 {
		t.Errorf("again: %d %v", n, err)
	}
}
