// Package githubapi is cdkbot's narrow GitHub client (go-github v60): the one sticky comment a
// review keeps on a pull request, minimizing duplicates, with retries that respect GitHub's
// rate limits. Owner and repository are bound at construction; tokens never appear in errors.
package githubapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// Options configure a client.
type Options struct {
	Token      string
	APIURL     string // GITHUB_API_URL; "" for https://api.github.com/
	GraphQLURL string // GITHUB_GRAPHQL_URL; "" derives it from APIURL
	Owner      string
	Repo       string
	// HTTP is the transport underneath the retries (tests pass an httptest client).
	HTTP *http.Client
	// Sleep waits between retries; tests record instead of waiting.
	Sleep func(context.Context, time.Duration) error
	// MaxAttempts bounds retries of one request (default 5).
	MaxAttempts int
	// Login is the identity the token acts as, when known (GITHUB_TOKEN comments as
	// "github-actions[bot]", which GET /user cannot tell).
	Login string
}

// Client is the GitHub API subset cdkbot uses.
type Client struct {
	gh         *github.Client
	http       *http.Client
	owner      string
	repo       string
	graphqlURL string
	login      string
}

// New builds a client.
func New(o Options) (*Client, error) {
	base := o.HTTP
	if base == nil {
		base = &http.Client{Timeout: 30 * time.Second}
	}
	sleep := o.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	attempts := o.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	transport := base.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	hc := &http.Client{Timeout: base.Timeout, Transport: &retrying{next: transport, sleep: sleep, attempts: attempts, token: o.Token}}
	gh := github.NewClient(hc)
	if o.APIURL != "" {
		api := strings.TrimSuffix(o.APIURL, "/") + "/"
		var err error
		if gh, err = gh.WithEnterpriseURLs(api, api); err != nil {
			return nil, fmt.Errorf("GITHUB_API_URL %q: %w", o.APIURL, err)
		}
		// WithEnterpriseURLs appends api/v3/ unless the URL already has it; GITHUB_API_URL is exact.
		u, _ := url.Parse(api)
		gh.BaseURL = u
	}
	gql := o.GraphQLURL
	if gql == "" {
		gql = strings.TrimSuffix(gh.BaseURL.String(), "/") + "/graphql"
		if gh.BaseURL.Host == "api.github.com" {
			gql = "https://api.github.com/graphql"
		}
	}
	return &Client{gh: gh, http: hc, owner: o.Owner, repo: o.Repo, graphqlURL: gql, login: o.Login}, nil
}

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

// ErrBodyTooLarge means GitHub rejected the comment body as too long; render less and retry.
var ErrBodyTooLarge = errors.New("GitHub rejected the comment body as too large")

// Login returns the identity the token acts as.
func (c *Client) Login(ctx context.Context) (string, error) {
	if c.login != "" {
		return c.login, nil
	}
	u, _, err := c.gh.Users.Get(ctx, "")
	if err != nil {
		return "", fmt.Errorf("who am I (GET /user): %w", err)
	}
	c.login = u.GetLogin()
	return c.login, nil
}

// UpsertComment keeps one comment on pull request number: it finds comments for which ours
// returns true among ALL pages, written by the token's own identity (anyone can paste a marker),
// edits the newest in place (or leaves it when the body is the same), creates one when none
// exists, and minimizes older duplicates.
func (c *Client) UpsertComment(ctx context.Context, number int, body string, ours func(body string) bool) (Result, error) {
	mine, err := c.ownComments(ctx, number, ours)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if len(mine) == 0 {
		cm, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, number, &github.IssueComment{Body: &body})
		if err != nil {
			return Result{}, tooLarge(fmt.Errorf("create comment on #%d: %w", number, err))
		}
		return Result{Action: Created, ID: cm.GetID(), URL: cm.GetHTMLURL()}, nil
	}
	newest := mine[len(mine)-1]
	res = Result{Action: Unchanged, ID: newest.GetID(), URL: newest.GetHTMLURL()}
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

func tooLarge(err error) error {
	var ge *github.ErrorResponse
	if errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusUnprocessableEntity &&
		strings.Contains(strings.ToLower(ge.Error()), "too long") {
		return fmt.Errorf("%w: %v", ErrBodyTooLarge, err)
	}
	return err
}

// Minimize hides a comment as outdated (GraphQL: go-github v60 has no GraphQL client).
func (c *Client) Minimize(ctx context.Context, nodeID string) error {
	q := map[string]any{
		"query":     "mutation($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: OUTDATED}) { minimizedComment { isMinimized } } }",
		"variables": map[string]string{"id": nodeID},
	}
	b, _ := json.Marshal(q)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.graphqlURL, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("minimize comment %s: %w", nodeID, err)
	}
	defer resp.Body.Close()
	var out struct {
		Errors []struct{ Message string } `json:"errors"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode >= 300 || len(out.Errors) > 0 {
		msg := resp.Status
		if len(out.Errors) > 0 {
			msg = out.Errors[0].Message
		}
		return fmt.Errorf("minimize comment %s: %s", nodeID, msg)
	}
	return nil
}

// retrying sends the token and retries what GitHub asks to retry: 5xx, 429 and rate-limit
// 403s, waiting as Retry-After or X-RateLimit-Reset say, else with exponential backoff.
type retrying struct {
	next     http.RoundTripper
	sleep    func(context.Context, time.Duration) error
	attempts int
	token    string
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	for attempt := 1; ; attempt++ {
		r := req.Clone(req.Context())
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if t.token != "" {
			r.Header.Set("Authorization", "Bearer "+t.token)
		}
		resp, err := t.next.RoundTrip(r)
		wait, retry := retryAfter(resp, err, attempt)
		if !retry || attempt >= t.attempts {
			return resp, err
		}
		if resp != nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// retryAfter decides whether and how long to wait before trying again.
func retryAfter(resp *http.Response, err error, attempt int) (time.Duration, bool) {
	backoff := time.Duration(math.Pow(2, float64(attempt-1))) * time.Second
	if err != nil {
		return backoff, false // network errors surface to the caller; only GitHub's answers are retried
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil && (resp.StatusCode == 429 || resp.StatusCode == 403 || resp.StatusCode >= 500) {
			return time.Duration(secs) * time.Second, true
		}
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		return backoff, true
	case resp.StatusCode == http.StatusForbidden && resp.Header.Get("X-RateLimit-Remaining") == "0":
		if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			if d := time.Until(time.Unix(reset, 0)); d > 0 {
				return d + time.Second, true
			}
		}
		return backoff, true
	}
	return 0, false
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// PullRequest is what a review needs to know about a pull request.
type PullRequest struct {
	Number           int
	HeadSHA, BaseSHA string
	Labels           []string
	Fork             bool
}

// PullRequest reads a pull request (for events that name it without its details, such as a
// comment on it).
func (c *Client) PullRequest(ctx context.Context, number int) (*PullRequest, error) {
	pr, _, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return nil, fmt.Errorf("read pull request #%d: %w", number, err)
	}
	out := &PullRequest{Number: pr.GetNumber(), HeadSHA: pr.GetHead().GetSHA(), BaseSHA: pr.GetBase().GetSHA(),
		Fork: pr.GetHead().GetRepo().GetFullName() != pr.GetBase().GetRepo().GetFullName()}
	for _, l := range pr.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out, nil
}

// ownComments lists, oldest first across all pages, the comments of issue or pull request
// number written by the token's own identity (anyone can paste a marker) that ours accepts.
func (c *Client) ownComments(ctx context.Context, number int, ours func(body string) bool) ([]*github.IssueComment, error) {
	login, err := c.Login(ctx)
	if err != nil {
		return nil, err
	}
	var mine []*github.IssueComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.gh.Issues.ListComments(ctx, c.owner, c.repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list comments of #%d: %w", number, err)
		}
		for _, cm := range page {
			if strings.EqualFold(cm.GetUser().GetLogin(), login) && ours(cm.GetBody()) {
				mine = append(mine, cm)
			}
		}
		if resp.NextPage == 0 {
			return mine, nil
		}
		opts.Page = resp.NextPage
	}
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

// MergedPullRequest is a pull request a pushed commit came from.
type MergedPullRequest struct {
	Number           int
	Title            string
	HeadSHA, BaseRef string
	MergeSHA         string
	Labels           []string
}

// MergedPullRequests returns the pull requests merged into base whose merge commit is one of
// shas (a push can carry several merges when a concurrency group cancelled runs in between),
// each once, in the order of shas.
func (c *Client) MergedPullRequests(ctx context.Context, base string, shas []string) ([]MergedPullRequest, error) {
	seen := map[int]bool{}
	var out []MergedPullRequest
	for _, sha := range shas {
		prs, _, err := c.gh.PullRequests.ListPullRequestsWithCommit(ctx, c.owner, c.repo, sha, &github.ListOptions{PerPage: 100})
		if err != nil {
			return out, fmt.Errorf("find the pull request of commit %s: %w", sha, err)
		}
		for _, pr := range prs {
			if pr.MergedAt == nil || pr.GetBase().GetRef() != base || seen[pr.GetNumber()] {
				continue
			}
			seen[pr.GetNumber()] = true
			m := MergedPullRequest{Number: pr.GetNumber(), Title: pr.GetTitle(), HeadSHA: pr.GetHead().GetSHA(),
				BaseRef: pr.GetBase().GetRef(), MergeSHA: pr.GetMergeCommitSHA()}
			for _, l := range pr.Labels {
				m.Labels = append(m.Labels, l.GetName())
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// CreateDeployment records a deployment of ref to environment (GitHub Deployments API); it
// needs no status checks to pass, since the merge already did.
func (c *Client) CreateDeployment(ctx context.Context, ref, environment, description string) (int64, error) {
	d, _, err := c.gh.Repositories.CreateDeployment(ctx, c.owner, c.repo, &github.DeploymentRequest{Ref: &ref, Environment: &environment,
		Description: &description, AutoMerge: github.Bool(false), RequiredContexts: &[]string{}})
	if err != nil {
		return 0, fmt.Errorf("create deployment of %s to %s: %w", ref, environment, err)
	}
	return d.GetID(), nil
}

// SetDeploymentStatus moves a deployment to state (in_progress, success, failure, error).
func (c *Client) SetDeploymentStatus(ctx context.Context, id int64, state, logURL, description string) error {
	_, _, err := c.gh.Repositories.CreateDeploymentStatus(ctx, c.owner, c.repo, id, &github.DeploymentStatusRequest{State: &state,
		LogURL: &logURL, Description: &description})
	if err != nil {
		return fmt.Errorf("set deployment %d to %s: %w", id, state, err)
	}
	return nil
}

// ReportIssue keeps one open issue labelled label for a recurring problem (a failed deploy):
// it comments on the open one the token opened, or opens it.
func (c *Client) ReportIssue(ctx context.Context, label, title, body string) (Result, error) {
	login, err := c.Login(ctx)
	if err != nil {
		return Result{}, err
	}
	open, _, err := c.gh.Issues.ListByRepo(ctx, c.owner, c.repo, &github.IssueListByRepoOptions{State: "open", Labels: []string{label},
		ListOptions: github.ListOptions{PerPage: 100}})
	if err != nil {
		return Result{}, fmt.Errorf("list open %s issues: %w", label, err)
	}
	for _, is := range open {
		if is.IsPullRequest() || !strings.EqualFold(is.GetUser().GetLogin(), login) {
			continue
		}
		cm, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, is.GetNumber(), &github.IssueComment{Body: &body})
		if err != nil {
			return Result{}, tooLarge(fmt.Errorf("comment on issue #%d: %w", is.GetNumber(), err))
		}
		return Result{Action: Updated, ID: int64(is.GetNumber()), URL: cm.GetHTMLURL()}, nil
	}
	is, _, err := c.gh.Issues.Create(ctx, c.owner, c.repo, &github.IssueRequest{Title: &title, Body: &body, Labels: &[]string{label}})
	if err != nil {
		return Result{}, tooLarge(fmt.Errorf("open an issue: %w", err))
	}
	return Result{Action: Created, ID: int64(is.GetNumber()), URL: is.GetHTMLURL()}, nil
}
