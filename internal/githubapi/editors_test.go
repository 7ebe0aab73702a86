package githubapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

// Who last edited each of cdkbot's own comments comes from GraphQL, across every page of the
// pull request's comments: a collaborator's edit names them (REST still shows cdkbot as the
// author), cdkbot's own edit (a bot, "[bot]" in REST, bare in GraphQL) and no edit name nobody,
// and others' comments are not returned.
func TestOwnCommentsWithEditorsNamesAnotherIdentitysEdit(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.PerPage = 2
	srv.Pulls[9] = &ghserver.PullRequest{Number: 9, Author: "dev", HeadSHA: "h9", BaseRef: "main", HeadRef: "t"}
	srv.Add(9, "alice", "<!-- cdkbot:{\"key\":\"k\"} --> pasted by a human")
	untouched := srv.Add(9, "github-actions[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> untouched")
	for i := range 3 {
		srv.Add(9, "bob", fmt.Sprintf("lgtm %d", i))
	}
	byUser := srv.Add(9, "github-actions[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> original")
	srv.Edit(byUser, "maintainer", "<!-- cdkbot:{\"key\":\"k\"} --> forged")
	byItself := srv.Add(9, "github-actions[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> original")
	srv.Edit(byItself, "github-actions[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> reviewed again")
	var sleeps []time.Duration
	got, err := client(t, srv, token, &sleeps).OwnCommentsWithEditors(context.Background(), 9, ours)
	if err != nil {
		t.Fatal(err)
	}
	want := []OwnComment{{Body: untouched.Body}, {Body: "<!-- cdkbot:{\"key\":\"k\"} --> forged", EditedBy: "maintainer"},
		{Body: "<!-- cdkbot:{\"key\":\"k\"} --> reviewed again"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	graphql := 0
	for _, call := range srv.CallsSince(0) {
		if call == "POST /graphql" {
			graphql++
		}
	}
	if graphql != 1+4 { // viewer, then 7 comments 2 a page
		t.Errorf("%d GraphQL requests, want the viewer and 4 pages", graphql)
	}
}

// GraphQL answering with an error is an error, never comments read as unedited.
func TestOwnCommentsWithEditorsFailsClosed(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Pulls[9] = &ghserver.PullRequest{Number: 9, Author: "dev", HeadSHA: "h9", BaseRef: "main", HeadRef: "t"}
	srv.Add(9, "github-actions[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> review")
	var sleeps []time.Duration
	c := client(t, srv, token, &sleeps)
	if _, err := c.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.Fail["POST /graphql"] = []ghserver.Response{{Status: 200,
		Body: `{"data":null,"errors":[{"type":"RATE_LIMITED","message":"API rate limit exceeded"}]}`}}
	if got, err := c.OwnCommentsWithEditors(context.Background(), 9, ours); err == nil {
		t.Errorf("no error, got %+v", got)
	}
}
