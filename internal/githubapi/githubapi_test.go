package githubapi

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

const token = "ghs_secretvalue123"

func ours(body string) bool { return strings.HasPrefix(body, "<!-- cdkbot:{\"key\":\"k\"") }

func client(t *testing.T, srv *ghserver.Server, sleeps *[]time.Duration) *Client {
	t.Helper()
	c, err := New(Options{Token: token, APIURL: srv.URL, Owner: "o", Repo: "r", MaxAttempts: 4,
		Sleep: func(_ context.Context, d time.Duration) error { *sleeps = append(*sleeps, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStickyComment(t *testing.T) {
	srv := ghserver.New(t, token)
	var sleeps []time.Duration
	c := client(t, srv, &sleeps)
	ctx := context.Background()
	body := "<!-- cdkbot:{\"key\":\"k\"} -->\nreview v1"

	res, err := c.UpsertComment(ctx, 7, body, ours)
	if err != nil || res.Action != Created {
		t.Fatalf("%+v %v", res, err)
	}
	want := []string{"GET /user", "GET /repos/o/r/issues/7/comments?per_page=100", "POST /repos/o/r/issues/7/comments"}
	if got := srv.CallsSince(0); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	n := len(srv.Calls)
	res, _ = c.UpsertComment(ctx, 7, body, ours)
	if res.Action != Unchanged || len(srv.CallsSince(n)) != 1 {
		t.Errorf("same body must not be written again: %+v %v", res, srv.CallsSince(n))
	}
	n = len(srv.Calls)
	res, _ = c.UpsertComment(ctx, 7, body+"\nv2", ours)
	if res.Action != Updated || !strings.HasPrefix(srv.CallsSince(n)[1], "PATCH /repos/o/r/issues/comments/") || len(srv.Comments[7]) != 1 {
		t.Errorf("edit in place: %+v %v", res, srv.CallsSince(n))
	}
}

// Long PRs: the marker is found on a later page; a pasted marker by someone else is ignored; an
// older duplicate of ours is minimized.
func TestFindsOurCommentOnEveryPageAndMinimizesDuplicates(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.PerPage = 2
	srv.Add(9, "alice", "<!-- cdkbot:{\"key\":\"k\"} --> pasted by a human")
	old := srv.Add(9, "cdkbot[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> old")
	for i := range 5 {
		srv.Add(9, "bob", "lgtm "+string(rune('a'+i)))
	}
	newest := srv.Add(9, "cdkbot[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> newer")
	srv.Add(9, "cdkbot[bot]", "<!-- cdkbot:{\"key\":\"other\"} --> another job's comment")
	var sleeps []time.Duration
	res, err := client(t, srv, &sleeps).UpsertComment(context.Background(), 9, "<!-- cdkbot:{\"key\":\"k\"} --> fresh", ours)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != Updated || res.ID != newest.ID || res.Minimized != 1 || !old.Minimized {
		t.Errorf("result %+v, old minimized %v", res, old.Minimized)
	}
	if srv.Comments[9][0].Body != "<!-- cdkbot:{\"key\":\"k\"} --> pasted by a human" {
		t.Error("edited someone else's comment")
	}
	pages := 0
	for _, call := range srv.Calls {
		if strings.HasPrefix(call, "GET /repos/o/r/issues/9/comments") {
			pages++
		}
	}
	if pages != 5 {
		t.Errorf("read %d pages, want all 5", pages)
	}
}

func TestRetries(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Fail["GET /user"] = []ghserver.Response{{Status: 502, Body: "bad gateway"}}
	srv.Fail["POST /repos/o/r/issues/3/comments"] = []ghserver.Response{
		{Status: 403, Headers: map[string]string{"Retry-After": "7"}, Body: `{"message":"You have exceeded a secondary rate limit"}`},
		{Status: 429, Body: `{"message":"too many"}`},
	}
	var sleeps []time.Duration
	res, err := client(t, srv, &sleeps).UpsertComment(context.Background(), 3, "<!-- cdkbot:{\"key\":\"k\"} --> x", ours)
	if err != nil || res.Action != Created {
		t.Fatalf("%+v %v", res, err)
	}
	if len(sleeps) != 3 || sleeps[0] != time.Second || sleeps[1] != 7*time.Second || sleeps[2] != 2*time.Second {
		t.Errorf("waits %v, want [1s 7s 2s] (backoff after a 502, Retry-After as told, backoff after a 429)", sleeps)
	}
}

func TestGivesUpAndNeverLeaksTheToken(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Fail["GET /user"] = []ghserver.Response{{Status: 500}, {Status: 500}, {Status: 500}, {Status: 500}}
	var sleeps []time.Duration
	_, err := client(t, srv, &sleeps).UpsertComment(context.Background(), 1, "x", ours)
	if err == nil || len(sleeps) != 3 {
		t.Fatalf("err %v after %d waits", err, len(sleeps))
	}
	if strings.Contains(err.Error(), token) {
		t.Error("the token leaked into an error")
	}
}

func TestBodyTooLarge(t *testing.T) {
	srv := ghserver.New(t, token)
	var sleeps []time.Duration
	_, err := client(t, srv, &sleeps).UpsertComment(context.Background(), 2, strings.Repeat("x", 70000), ours)
	if !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("want ErrBodyTooLarge, got %v", err)
	}
}
