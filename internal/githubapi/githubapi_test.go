package githubapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/ghspec"
)

const token = "ghs_secretvalue123"

func ours(body string) bool { return strings.HasPrefix(body, "<!-- cdkbot:{\"key\":\"k\"") }

func client(t *testing.T, srv *ghserver.Server, tok string, sleeps *[]time.Duration) *Client {
	t.Helper()
	c, err := New(Options{Token: tok, APIURL: srv.APIURL(), Owner: "acme", Repo: "shop", MaxAttempts: 4,
		Now:   func() time.Time { return time.Unix(1_800_000_000, 0) },
		Sleep: func(_ context.Context, d time.Duration) error { *sleeps = append(*sleeps, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every token kind finds its own comment: two runs leave exactly one comment, edited when the
// body changes and untouched when it does not. The identity comes from GraphQL's viewer (REST
// GET /user answers 403 for installation tokens), asked once per client, and REST's
// "<login>[bot]" is matched with it. GHES uses /api/v3 and /api/graphql.
func TestStickyCommentForEveryTokenKind(t *testing.T) {
	for _, c := range []struct {
		name    string
		flavour ghspec.Flavour
		token   string
		who     ghserver.Identity
	}{
		{"Actions token", ghspec.DotCom, "ghs_actions", ghserver.ActionsToken},
		{"App installation token", ghspec.DotCom, "ghs_app", ghserver.AppToken},
		{"personal access token", ghspec.DotCom, "github_pat_11AAA", ghserver.PAT},
		{"GHES", ghspec.GHES, "ghs_ghes", ghserver.AppToken},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := ghserver.NewWith(t, ghserver.Options{Flavour: c.flavour, Tokens: map[string]ghserver.Identity{c.token: c.who, "ghs_other": ghserver.ActionsToken}})
			other := "github-actions[bot]"
			if c.who == ghserver.ActionsToken {
				other = "cdk-deployer[bot]"
			}
			srv.Add(7, other, "<!-- cdkbot:{\"key\":\"k\"} --> another bot's comment with our marker")
			ctx := context.Background()
			var sleeps []time.Duration
			body := "<!-- cdkbot:{\"key\":\"k\"} -->\nreview v1"
			for run, want := range []Action{Created, Unchanged, Updated} {
				if run == 2 {
					body += "\nv2"
				}
				// A new process each run, as each workflow run is.
				res, err := client(t, srv, c.token, &sleeps).UpsertComment(ctx, 7, body, ours)
				if err != nil || res.Action != want {
					t.Fatalf("run %d: %+v %v, want %s", run+1, res, err, want)
				}
			}
			if len(srv.Comments[7]) != 2 || srv.Comments[7][1].Body != body || srv.Comments[7][1].User != c.who.REST() {
				t.Errorf("comments: %+v", srv.Comments[7])
			}
			if srv.Comments[7][0].Body != "<!-- cdkbot:{\"key\":\"k\"} --> another bot's comment with our marker" {
				t.Error("edited another identity's comment")
			}
			if n := srv.Count("users/get-authenticated"); n != 0 {
				t.Errorf("GET /user was called %d times; it answers 403 for installation tokens", n)
			}
			cl := client(t, srv, c.token, &sleeps)
			if login, err := cl.Login(ctx); err != nil || login != c.who.Login {
				t.Errorf("login %q %v", login, err)
			}
		})
	}
}

func TestSameLogin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"github-actions[bot]", "github-actions", true},
		{"cdk-deployer[bot]", "CDK-Deployer", true},
		{"octocat", "octocat", true},
		{"cdk-deployer[bot]", "github-actions", false},
		{"", "", false},
	} {
		if got := SameLogin(c.a, c.b); got != c.want {
			t.Errorf("SameLogin(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// Long PRs: 250 comments over 3 pages; the marker is found on the last page; a pasted marker
// by someone else is ignored; an older duplicate of ours is minimized.
func TestFindsOurCommentOnEveryPageAndMinimizesDuplicates(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Add(9, "alice", "<!-- cdkbot:{\"key\":\"k\"} --> pasted by a human")
	old := srv.Add(9, "github-actions[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> old")
	for i := range 246 {
		srv.Add(9, "bob", fmt.Sprintf("lgtm %d", i))
	}
	newest := srv.Add(9, "github-actions[bot]", "<!-- cdkbot:{\"key\":\"k\"} --> newer")
	srv.Add(9, "github-actions[bot]", "<!-- cdkbot:{\"key\":\"other\"} --> another job's comment")
	var sleeps []time.Duration
	res, err := client(t, srv, token, &sleeps).UpsertComment(context.Background(), 9, "<!-- cdkbot:{\"key\":\"k\"} --> fresh", ours)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != Updated || res.ID != newest.ID || res.Minimized != 1 || !old.Minimized {
		t.Errorf("result %+v, old minimized %v", res, old.Minimized)
	}
	if srv.Comments[9][0].Body != "<!-- cdkbot:{\"key\":\"k\"} --> pasted by a human" {
		t.Error("edited someone else's comment")
	}
	if n := srv.Count("issues/list-comments"); n != 3 {
		t.Errorf("read %d pages, want all 3", n)
	}
}

// GitHub stores a comment and the answer is lost: the POST is not replayed blindly; cdkbot
// finds the stored comment and leaves exactly one.
func TestLostAnswerLeavesOneComment(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Drop["POST /repos/acme/shop/issues/3/comments"] = 1
	var sleeps []time.Duration
	res, err := client(t, srv, token, &sleeps).UpsertComment(context.Background(), 3, "<!-- cdkbot:{\"key\":\"k\"} --> x", ours)
	if err != nil || res.Action != Created || res.ID == 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if len(srv.Comments[3]) != 1 || srv.Count("issues/create-comment") != 1 {
		t.Errorf("%d comments after %d POSTs, want 1 and 1", len(srv.Comments[3]), srv.Count("issues/create-comment"))
	}
	// A 502 on the POST: the comment is absent, so it is sent again, once.
	srv.Fail["POST /repos/acme/shop/issues/4/comments"] = []ghserver.Response{{Status: 502, Body: `{"message":"Server Error"}`}}
	res, err = client(t, srv, token, &sleeps).UpsertComment(context.Background(), 4, "<!-- cdkbot:{\"key\":\"k\"} --> y", ours)
	if err != nil || res.Action != Created || len(srv.Comments[4]) != 1 || srv.Count("issues/create-comment") != 3 {
		t.Errorf("%+v %v: %d comments, %d POSTs", res, err, len(srv.Comments[4]), srv.Count("issues/create-comment"))
	}
}

// Rate limits are waited out as GitHub says (Retry-After; X-RateLimit-Reset; a secondary
// limit told only by its text: a minute), for POSTs too, since GitHub rejected them before
// acting; a reset further away than MaxWait fails at once and says when to run again.
func TestRateLimits(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Fail["GET /repos/acme/shop/issues/3/comments"] = []ghserver.Response{{Status: 502, Body: "bad gateway"}}
	srv.Fail["POST /repos/acme/shop/issues/3/comments"] = []ghserver.Response{
		{Status: 403, Headers: map[string]string{"Retry-After": "7"}, Body: `{"message":"You have exceeded a secondary rate limit"}`},
		{Status: 403, Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`},
		{Status: 403, Headers: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1800000030"}, Body: `{"message":"API rate limit exceeded"}`},
	}
	var sleeps []time.Duration
	res, err := client(t, srv, token, &sleeps).UpsertComment(context.Background(), 3, "<!-- cdkbot:{\"key\":\"k\"} --> x", ours)
	if err != nil || res.Action != Created || len(srv.Comments[3]) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	want := []time.Duration{time.Second, 7 * time.Second, 2 * time.Minute, 31 * time.Second}
	if fmt.Sprint(sleeps) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v (backoff after a 502, Retry-After, a minute × attempt, until the reset)", sleeps, want)
	}
	srv.Fail["GET /repos/acme/shop/issues/5/comments"] = []ghserver.Response{
		{Status: 403, Headers: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1800003600"}, Body: `{"message":"API rate limit exceeded"}`}}
	_, err = client(t, srv, token, &sleeps).UpsertComment(context.Background(), 5, "x", ours)
	if err == nil || !strings.Contains(err.Error(), "resets in 1h0m1s") {
		t.Errorf("a reset an hour away must fail at once, saying when: %v", err)
	}
}

func TestGivesUpAndNeverLeaksTheToken(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Fail["GET /repos/acme/shop/issues/1/comments"] = []ghserver.Response{{Status: 500}, {Status: 500}, {Status: 500}, {Status: 500}}
	var sleeps []time.Duration
	_, err := client(t, srv, token, &sleeps).UpsertComment(context.Background(), 1, "x", ours)
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
	_, err := client(t, srv, token, &sleeps).UpsertComment(context.Background(), 2, strings.Repeat("x", 70000), ours)
	if !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("want ErrBodyTooLarge, got %v", err)
	}
}

// A check run takes 50 annotations a request: 120 go as one create and two updates; the
// summary is cut to the Checks API's 65,535 characters.
func TestCheckRunAnnotationsInChunks(t *testing.T) {
	srv := ghserver.New(t, token)
	var anns []Annotation
	for i := range 120 {
		anns = append(anns, Annotation{Path: "cdk.json", StartLine: 1, Level: "failure", Title: "gate", Message: fmt.Sprintf("item %d", i)})
	}
	var sleeps []time.Duration
	url, err := client(t, srv, token, &sleeps).CompleteCheckRun(context.Background(), CheckRun{Name: "cdkbot", HeadSHA: "abc123",
		Conclusion: "failure", Title: "blocked", Summary: strings.Repeat("é", 70000), ExternalID: "k", Annotations: anns})
	if err != nil || url == "" {
		t.Fatal(err)
	}
	if len(srv.CheckRuns) != 1 || srv.CheckRuns[0].Updates != 2 || len(srv.CheckRuns[0].Annotations) != 120 || srv.CheckRuns[0].Conclusion != "failure" {
		t.Fatalf("check runs: %+v", srv.CheckRuns)
	}
	if n := len([]rune(srv.CheckRuns[0].Summary)); n != CheckTextLimit {
		t.Errorf("summary has %d characters", n)
	}
	// A lost answer: the run is found by its external id, not created twice.
	srv.Drop["POST /repos/acme/shop/check-runs"] = 1
	if _, err := client(t, srv, token, &sleeps).CompleteCheckRun(context.Background(), CheckRun{Name: "cdkbot", HeadSHA: "def456",
		Conclusion: "success", Title: "ok", Summary: "ok", ExternalID: "k2"}); err != nil || len(srv.CheckRuns) != 2 {
		t.Errorf("%v, %d runs", err, len(srv.CheckRuns))
	}
}

func TestWhoApproved(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Pulls[5] = &ghserver.PullRequest{Number: 5, Author: "alice", HeadSHA: "h", BaseSHA: "b", HeadRef: "topic", BaseRef: "main", Labels: []string{"cdkbot/approve-destructive"}}
	srv.LabelEvents[5] = []ghserver.LabelEvent{{Label: "docs", Actor: "alice"}, {Label: "cdkbot/approve-destructive", Actor: "bob"}}
	srv.Reviews[5] = []ghserver.Review{{User: "carol", State: "APPROVED"}}
	srv.Permissions["bob"] = "maintain"
	var sleeps []time.Duration
	c := client(t, srv, token, &sleeps)
	ctx := context.Background()
	pr, err := c.PullRequest(ctx, 5)
	if err != nil || pr.Author != "alice" || pr.Labels[0] != "cdkbot/approve-destructive" || pr.Fork {
		t.Fatalf("%+v %v", pr, err)
	}
	ev, err := c.LabelEvents(ctx, 5)
	if err != nil || fmt.Sprint(ev) != "[{docs alice} {cdkbot/approve-destructive bob}]" {
		t.Errorf("%v %v", ev, err)
	}
	rv, err := c.Reviews(ctx, 5)
	if err != nil || len(rv) != 1 || rv[0].User != "carol" || rv[0].State != "APPROVED" {
		t.Errorf("%v %v", rv, err)
	}
	for login, want := range map[string]string{"bob": "maintain", "mallory": "none"} {
		if p, err := c.Permission(ctx, login); err != nil || p != want {
			t.Errorf("%s: %q %v", login, p, err)
		}
	}
}

// What may be sent again: a request that never reached GitHub always; a POST GitHub may have
// acted on (5xx, a lost answer) never blindly; reads and updates on 5xx and 429.
func TestRetryDecisions(t *testing.T) {
	r := &retrying{now: time.Now}
	refused := &net.OpError{Op: "dial", Err: errors.New("connection refused")}
	reset := &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}
	resp := func(code int) *http.Response { return &http.Response{StatusCode: code, Header: http.Header{}} }
	for _, c := range []struct {
		name string
		resp *http.Response
		err  error
		safe bool
		want bool
	}{
		{"POST refused", nil, refused, false, true},
		{"POST DNS failure", nil, &net.DNSError{Err: "no such host"}, false, true},
		{"POST reset after sending", nil, reset, false, false},
		{"GET reset", nil, reset, true, true},
		{"POST 502", resp(502), nil, false, false},
		{"PATCH 502", resp(502), nil, true, true},
		{"POST 429", resp(429), nil, false, true},
		{"POST 422", resp(422), nil, false, false},
		{"GET 404", resp(404), nil, true, false},
	} {
		if _, got := r.decide(c.resp, nil, c.err, 1, c.safe); got != c.want {
			t.Errorf("%s: retry %v, want %v", c.name, got, c.want)
		}
	}
}

// A GitHub that cannot be reached: the POST is tried again (it never arrived), then the
// error says what happened, without the token.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var sleeps []time.Duration
	c, _ := New(Options{Token: token, APIURL: "http://" + addr, Owner: "o", Repo: "r", MaxAttempts: 3,
		Sleep: func(_ context.Context, d time.Duration) error { sleeps = append(sleeps, d); return nil }})
	_, err = c.ReportIssue(context.Background(), "l", "t", "b")
	if err == nil || len(sleeps) != 2 || strings.Contains(err.Error(), token) {
		t.Errorf("err %v after %d waits", err, len(sleeps))
	}
}

// Deployments and issues whose answers are lost are found, not created twice.
func TestLostAnswersOfDeploymentsAndIssues(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Drop["POST /repos/acme/shop/deployments"] = 1
	srv.Drop["POST /repos/acme/shop/issues"] = 1
	var sleeps []time.Duration
	c := client(t, srv, token, &sleeps)
	ctx := context.Background()
	id, err := c.CreateDeployment(ctx, "abc", "123456789012-us-east-1", "cdkbot deploy of abc")
	if err != nil || len(srv.Deployments) != 1 || id != srv.Deployments[0].ID || srv.Count("repos/list-deployments") != 1 {
		t.Errorf("deployment %d %v: %+v", id, err, srv.Deployments)
	}
	res, err := c.ReportIssue(ctx, "cdkbot-deploy-failed", "deploy failed", "body")
	if err != nil || res.Action != Created || len(srv.Issues) != 1 || res.ID != int64(srv.Issues[0].Number) {
		t.Errorf("issue %+v %v: %+v", res, err, srv.Issues)
	}
	// The next failure comments on the open issue.
	res, err = c.ReportIssue(ctx, "cdkbot-deploy-failed", "deploy failed", "again")
	if err != nil || res.Action != Updated || len(srv.Issues) != 1 || srv.Body(srv.Issues[0].Number) != "again" {
		t.Errorf("second report %+v %v", res, err)
	}
}

// A server that always has another page is read 100 pages deep, then refused, not forever.
func TestEndlessPagination(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.EndlessPages = true
	srv.Add(3, "bob", "hi")
	var sleeps []time.Duration
	_, err := client(t, srv, token, &sleeps).UpsertComment(context.Background(), 3, "<!-- cdkbot:{\"key\":\"k\"} --> x", func(string) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "kept answering with a next page after 100 pages") || srv.Count("issues/list-comments") != 100 {
		t.Errorf("%v after %d pages", err, srv.Count("issues/list-comments"))
	}
}

// A deployment status GitHub answers with a 502 before storing it is sent again after the
// client's backoff and lands once; a failure of another kind is not retried. (Before, the first
// 502 was final and the deployment stayed "in progress".)
func TestDeploymentStatusIsRetriedOn5xx(t *testing.T) {
	srv := ghserver.New(t, token)
	var sleeps []time.Duration
	c := client(t, srv, token, &sleeps)
	ctx := context.Background()
	id, err := c.CreateDeployment(ctx, "abc", "123456789012-us-east-1", "cdkbot deploy of abc")
	if err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf("POST /repos/acme/shop/deployments/%d/statuses", id)
	srv.Fail[key] = []ghserver.Response{{Status: http.StatusBadGateway, Body: `{"message": "Server Error"}`}}
	if err := c.SetDeploymentStatus(ctx, id, "success", "https://ci.example/run/1", "deployed"); err != nil {
		t.Fatal(err)
	}
	d := srv.Deployments[0]
	if !reflect.DeepEqual(d.States, []string{"success"}) || srv.Count("repos/create-deployment-status") != 2 ||
		!reflect.DeepEqual(sleeps, []time.Duration{time.Second}) {
		t.Errorf("states %v after %d requests, waits %v", d.States, srv.Count("repos/create-deployment-status"), sleeps)
	}
	// 5xx each time: given up after the client's attempts, saying so.
	srv.Fail[key] = slices.Repeat([]ghserver.Response{{Status: http.StatusServiceUnavailable, Body: `{"message": "unavailable"}`}}, 4)
	sleeps = nil
	if err := c.SetDeploymentStatus(ctx, id, "failure", "", "failed"); err == nil || !strings.Contains(err.Error(), "503") ||
		len(sleeps) != 3 || len(d.States) != 1 {
		t.Errorf("always 503: %v after %v, states %v", err, sleeps, d.States)
	}
	// A 422 is GitHub's answer, not a failure to answer: not sent again.
	srv.Fail[key] = []ghserver.Response{{Status: http.StatusUnprocessableEntity, Body: `{"message": "Validation Failed"}`}}
	n := srv.Count("repos/create-deployment-status")
	if err := c.SetDeploymentStatus(ctx, id, "success", "", "deployed"); err == nil || srv.Count("repos/create-deployment-status") != n+1 {
		t.Errorf("422: %v, %d requests", err, srv.Count("repos/create-deployment-status")-n)
	}
}
