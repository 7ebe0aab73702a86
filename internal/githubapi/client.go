// Package githubapi is cdkbot's narrow GitHub client (go-github v60, plus GraphQL where REST has
// no answer): the identity a token acts as, the one sticky comment a review keeps on a pull
// request, check runs, who approved a pull request, deployments and the deploy-failure issue.
// Owner and repository are bound at construction; tokens never appear in errors.
//
// Retries never duplicate: reads and updates are retried on 5xx and 429; a creating POST is
// retried only when GitHub rejected it before acting (rate limits) or the request never reached
// GitHub; when its answer was lost, the caller looks for its effect before sending it again.
//
// Each attempt has its own time limit, below the retries: a slow answer fails its attempt, not
// the request, and the waits GitHub asks for (up to MaxWait) are waited out whole.
package githubapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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
	// HTTP is the client each attempt goes through, underneath the retries (tests pass an
	// httptest client): its Transport sends, and its Timeout bounds one attempt — sending and
	// reading the whole answer — never the waits between attempts (default 60 s).
	HTTP *http.Client
	// Sleep waits between retries; tests record instead of waiting.
	Sleep func(context.Context, time.Duration) error
	// MaxAttempts bounds retries of one request (default 5).
	MaxAttempts int
	// MaxWait bounds one wait for a rate limit (default 5 minutes): a longer one fails at once,
	// saying when the limit resets.
	MaxWait time.Duration
	// Now is the clock rate-limit resets are measured against (default time.Now).
	Now func() time.Time
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

// DefaultAttemptTimeout bounds one attempt of a request when Options.HTTP sets no timeout: far
// above what GitHub takes to answer (it gives up on its side after 10 s), so only an answer
// that is lost fails an attempt.
const DefaultAttemptTimeout = 60 * time.Second

// New builds a client.
func New(o Options) (*Client, error) {
	base := o.HTTP
	if base == nil {
		base = &http.Client{}
	}
	r := &retrying{
		next: base.Transport, sleep: o.Sleep, attempts: o.MaxAttempts, maxWait: o.MaxWait, now: o.Now, token: o.Token,
		timeout: base.Timeout,
	}
	if r.timeout <= 0 {
		r.timeout = DefaultAttemptTimeout
	}
	if r.next == nil {
		r.next = http.DefaultTransport
	}
	if r.sleep == nil {
		r.sleep = sleepCtx
	}
	if r.attempts <= 0 {
		r.attempts = 5
	}
	if r.maxWait <= 0 {
		r.maxWait = 5 * time.Minute
	}
	if r.now == nil {
		r.now = time.Now
	}
	// No Timeout here: it would cover the retries and the waits between them, cutting a wait
	// GitHub asked for (Retry-After: 40) at the client's limit. Each attempt has its own.
	hc := &http.Client{Transport: r}
	gh := github.NewClient(hc)
	if o.APIURL != "" {
		api := strings.TrimSuffix(o.APIURL, "/") + "/"
		u, err := url.Parse(api)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("GITHUB_API_URL %q is not a URL", o.APIURL)
		}
		// GITHUB_API_URL is exact (https://ghe.example.com/api/v3 on GHES): no path is added.
		gh.BaseURL = u
	}
	gql := o.GraphQLURL
	if gql == "" {
		// GHES serves GraphQL at /api/graphql beside /api/v3; github.com at /graphql.
		gql = strings.TrimSuffix(strings.TrimSuffix(gh.BaseURL.String(), "/"), "/v3") + "/graphql"
	}
	return &Client{gh: gh, http: hc, owner: o.Owner, repo: o.Repo, graphqlURL: gql}, nil
}

// maxPages bounds every listing (100 pages of 100: 10,000 comments, events or reviews): a
// server that keeps answering with a next page cannot keep cdkbot reading forever.
const maxPages = 100

var errTooManyPages = fmt.Errorf("GitHub kept answering with a next page after %d pages; stopped reading", maxPages)

// listAll reads every page of a listing (100 items a page, at most maxPages pages), oldest
// first; fetch reads page number page (0 is the first).
func listAll[T any](fetch func(page int) ([]T, *github.Response, error)) ([]T, error) {
	var out []T
	page := 0
	for pages := 1; ; pages++ {
		if pages > maxPages {
			return nil, errTooManyPages
		}
		items, resp, err := fetch(page)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if resp.NextPage == 0 {
			return out, nil
		}
		page = resp.NextPage
	}
}

// idempotentKey marks a request that may be sent again whatever happened to the first (a
// GraphQL query, minimizing a comment).
type idempotentKey struct{}

func idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

// retrying sends the token and retries what is safe to retry, waiting as GitHub says.
type retrying struct {
	next     http.RoundTripper
	sleep    func(context.Context, time.Duration) error
	attempts int
	maxWait  time.Duration
	now      func() time.Time
	token    string
	timeout  time.Duration // one attempt: sending it and reading its whole answer
}

// maxAnswer bounds one answer read into memory: a page of 100 comments of GitHub's largest size,
// JSON-escaped, fits many times over.
const maxAnswer = 64 << 20

// AttemptTimeoutError is an attempt GitHub did not answer in time. Whether GitHub acted on it is
// not known: a read is sent again, a creating request looked for first (createOnce).
type AttemptTimeoutError struct{ Limit time.Duration }

func (e *AttemptTimeoutError) Error() string {
	return fmt.Sprintf("GitHub did not answer within %s", e.Limit)
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
	safe := req.Method != http.MethodPost || req.Context().Value(idempotentKey{}) == true
	for attempt := 1; ; attempt++ {
		resp, peek, err := t.once(req, body)
		if req.Context().Err() != nil {
			return nil, req.Context().Err()
		}
		wait, retry := t.decide(resp, peek, err, attempt, safe)
		if !retry || attempt >= t.attempts {
			return resp, err
		}
		if wait > t.maxWait {
			return nil, fmt.Errorf("GitHub's rate limit for this token resets in %s, longer than cdkbot waits (%s); "+
				"run again later", wait.Round(time.Second), t.maxWait)
		}
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// once sends one attempt and reads its whole answer, both within the attempt's time limit; the
// answer's body comes back in memory (and, for a 403, as peek: a secondary rate limit is told by
// its text alone).
func (t *retrying) once(req *http.Request, body []byte) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	defer cancel()
	r := req.Clone(ctx)
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if t.token != "" {
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		var b []byte
		b, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
		resp.Body.Close()
		switch {
		case err != nil:
			err = fmt.Errorf("read GitHub's answer: %w", err)
		case len(b) > maxAnswer:
			err = fmt.Errorf("GitHub's answer is larger than %d MiB", maxAnswer>>20)
		default:
			resp.Body = io.NopCloser(bytes.NewReader(b))
			var peek []byte
			if resp.StatusCode == http.StatusForbidden {
				peek = b
			}
			return resp, peek, nil
		}
	}
	if ctx.Err() != nil && req.Context().Err() == nil {
		err = &AttemptTimeoutError{Limit: t.timeout}
	}
	return nil, nil, err
}

// decide says whether and how long to wait before trying a request again.
func (t *retrying) decide(resp *http.Response, body []byte, err error, attempt int, safe bool) (time.Duration, bool) {
	backoff := time.Duration(1<<(attempt-1)) * time.Second
	if err != nil {
		// A request that never reached GitHub can always be sent again; one that may have,
		// only when sending it twice does no harm.
		return backoff, neverSent(err) || safe
	}
	limited := resp.StatusCode == http.StatusTooManyRequests ||
		resp.StatusCode == http.StatusForbidden && (resp.Header.Get("Retry-After") != "" ||
			resp.Header.Get("X-RateLimit-Remaining") == "0" ||
			bytes.Contains(bytes.ToLower(body), []byte("secondary rate limit")))
	switch {
	case limited:
		// GitHub rejected the request before acting on it: any method may be sent again.
		if s := resp.Header.Get("Retry-After"); s != "" {
			if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
				return time.Duration(secs) * time.Second, true
			}
		}
		if resp.Header.Get("X-RateLimit-Remaining") == "0" {
			if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				if d := time.Unix(reset, 0).Sub(t.now()); d > 0 {
					return d + time.Second, true
				}
				return time.Second, true
			}
		}
		if resp.StatusCode == http.StatusForbidden {
			// GitHub: with neither header, wait at least a minute, longer each time.
			return time.Duration(attempt) * time.Minute, true
		}
		return backoff, true
	case resp.StatusCode >= 500:
		return backoff, safe
	}
	return 0, false
}

// neverSent is true for errors that happen before a request reaches GitHub: no connection
// could be made (refused, unreachable, DNS), however wrapped (url.Error, go-github).
func neverSent(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// ambiguous is true when a creating request failed in a way that leaves open whether GitHub
// acted on it: its answer was lost, or GitHub failed while handling it.
func ambiguous(err error) bool {
	if err == nil {
		return false
	}
	var ge *github.ErrorResponse
	if errors.As(err, &ge) {
		return ge.Response != nil && ge.Response.StatusCode >= 500
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !neverSent(err)
}

// createOnce sends a creating request, and when its outcome is unknown looks for its effect
// before sending it again, so nothing GitHub stored is created twice.
func createOnce[T any](ctx context.Context, create func() (T, error), find func() (T, bool, error)) (T, error) {
	var zero T
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		var v T
		v, err = create()
		if !ambiguous(err) {
			return v, err
		}
		found, ok, ferr := find()
		if ferr != nil {
			return zero, fmt.Errorf("%w (and looking for its effect failed: %v)", err, ferr)
		}
		if ok {
			return found, nil
		}
	}
	return zero, err
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

// graphql sends one GraphQL request (go-github v60 has no GraphQL client) and decodes its data.
func (c *Client) graphql(ctx context.Context, what, query string, variables map[string]any, data any) error {
	b, err := json.Marshal(map[string]any{"query": query, "variables": variables})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(idempotent(ctx), http.MethodPost, c.graphqlURL, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
		Message string `json:"message"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&out); err != nil && resp.StatusCode < 300 {
		return fmt.Errorf("%s: GitHub's answer is not JSON: %v", what, err)
	}
	switch {
	case resp.StatusCode >= 300:
		msg := out.Message
		if msg == "" {
			msg = resp.Status
		}
		return &StatusError{What: what, Status: resp.StatusCode, Message: msg}
	case len(out.Errors) > 0:
		return fmt.Errorf("%s: %s", what, out.Errors[0].Message)
	}
	if data != nil {
		return json.Unmarshal(out.Data, data)
	}
	return nil
}

// StatusError is a GraphQL request GitHub answered with an HTTP error.
type StatusError struct {
	What    string
	Status  int
	Message string
}

func (e *StatusError) Error() string { return fmt.Sprintf("%s: %d %s", e.What, e.Status, e.Message) }

// CannotWrite is true when GitHub refused an operation for lack of permission (a fork's token,
// a token without checks: write): the caller degrades instead of failing.
func CannotWrite(err error) bool {
	var ge *github.ErrorResponse
	if errors.As(err, &ge) && ge.Response != nil {
		return ge.Response.StatusCode == http.StatusForbidden || ge.Response.StatusCode == http.StatusNotFound
	}
	var se *StatusError
	return errors.As(err, &se) && (se.Status == http.StatusForbidden || se.Status == http.StatusNotFound)
}

// ErrBodyTooLarge means GitHub rejected a body as too long; render less and retry.
var ErrBodyTooLarge = errors.New("GitHub rejected the body as too large")

func tooLarge(err error) error {
	var ge *github.ErrorResponse
	if errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusUnprocessableEntity &&
		strings.Contains(strings.ToLower(ge.Error()), "too long") {
		return fmt.Errorf("%w: %v", ErrBodyTooLarge, err)
	}
	return err
}
