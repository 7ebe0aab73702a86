package githubapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

// fakeClock is a Sleep that takes no time but keeps the deadlines real time would meet: a wait
// longer than what is left of the request's deadline fails as a real wait would, at once.
type fakeClock struct{ waits []time.Duration }

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return fmt.Errorf("waiting %s: %w", d, context.DeadlineExceeded)
	}
	c.waits = append(c.waits, d)
	return ctx.Err()
}

// The waits GitHub asks for are waited out up to MaxWait (rate-limit-wait, 5 minutes by default):
// no client-wide time limit cuts them at 30 s. Retry-After: 40 is waited 40 s; a secondary rate
// limit without headers a minute; then the comment is posted.
func TestLongRateLimitWaitsAreWaitedOut(t *testing.T) {
	for _, c := range []struct {
		name string
		fail ghserver.Response
		want time.Duration
	}{
		{"Retry-After: 40", ghserver.Response{Status: 403, Headers: map[string]string{"Retry-After": "40"},
			Body: `{"message":"You have exceeded a secondary rate limit"}`}, 40 * time.Second},
		{"secondary limit without headers", ghserver.Response{Status: 403,
			Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes."}`}, time.Minute},
		{"429 with Retry-After: 90", ghserver.Response{Status: 429, Headers: map[string]string{"Retry-After": "90"},
			Body: `{"message":"too many requests"}`}, 90 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := ghserver.New(t, token)
			srv.Fail["POST /repos/acme/shop/issues/3/comments"] = []ghserver.Response{c.fail}
			clock := &fakeClock{}
			// The defaults, as the action builds its client: only the clock is fake.
			cl, err := New(Options{Token: token, APIURL: srv.APIURL(), Owner: "acme", Repo: "shop", Sleep: clock.sleep})
			if err != nil {
				t.Fatal(err)
			}
			res, err := cl.UpsertComment(context.Background(), 3, "<!-- cdkbot:{\"key\":\"k\"} --> x", ours)
			if err != nil || res.Action != Created || len(srv.Comments[3]) != 1 {
				t.Fatalf("%+v %v (waits %v)", res, err, clock.waits)
			}
			if len(clock.waits) != 1 || clock.waits[0] != c.want {
				t.Errorf("waits %v, want [%s]", clock.waits, c.want)
			}
		})
	}
}

// A slow answer fails its attempt, not the request: each attempt has its own limit (HTTP's
// Timeout, here 300 ms standing for the 30 s it used to be for everything), so a read is sent
// again, and a comment GitHub stored while its answer was late is found, not posted twice.
func TestSlowAnswerFailsOnlyItsAttempt(t *testing.T) {
	for _, c := range []struct {
		name, key string
		reads     int // list-comments requests
		posts     int // create-comment requests
	}{
		{"a slow read", "GET /repos/acme/shop/issues/3/comments", 2, 1},
		{"a slow comment", "POST /repos/acme/shop/issues/3/comments", 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := ghserver.New(t, token)
			srv.Slow[c.key] = []time.Duration{350 * time.Millisecond}
			clock := &fakeClock{}
			cl, err := New(Options{Token: token, APIURL: srv.APIURL(), Owner: "acme", Repo: "shop", Sleep: clock.sleep,
				HTTP: &http.Client{Timeout: 300 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := cl.UpsertComment(context.Background(), 3, "<!-- cdkbot:{\"key\":\"k\"} --> x", ours)
			if err != nil || res.Action != Created || len(srv.Comments[3]) != 1 {
				t.Fatalf("%+v %v", res, err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s", took)
			}
			if r, p := srv.Count("issues/list-comments"), srv.Count("issues/create-comment"); r != c.reads || p != c.posts {
				t.Errorf("%d reads and %d posts, want %d and %d", r, p, c.reads, c.posts)
			}
		})
	}
}

// Every attempt late: the request fails saying so, after MaxAttempts attempts, and the caller's
// own deadline still ends everything at once.
func TestEveryAttemptLate(t *testing.T) {
	srv := ghserver.New(t, token)
	srv.Slow["GET /repos/acme/shop/issues/3/comments"] = []time.Duration{time.Second, time.Second, time.Second}
	clock := &fakeClock{}
	cl, _ := New(Options{Token: token, APIURL: srv.APIURL(), Owner: "acme", Repo: "shop", Sleep: clock.sleep, MaxAttempts: 3,
		HTTP: &http.Client{Timeout: 100 * time.Millisecond}})
	_, err := cl.UpsertComment(context.Background(), 3, "x", ours)
	var te *AttemptTimeoutError
	if !errors.As(err, &te) || len(clock.waits) != 2 {
		t.Errorf("%v after %v", err, clock.waits)
	}
	srv = ghserver.New(t, token)
	srv.Slow["GET /repos/acme/shop/issues/3/comments"] = []time.Duration{time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cl, _ = New(Options{Token: token, APIURL: srv.APIURL(), Owner: "acme", Repo: "shop", Sleep: clock.sleep})
	start := time.Now()
	if _, err := cl.UpsertComment(ctx, 3, "x", ours); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("%v after %s", err, time.Since(start))
	}
}

// An attempt that timed out may have reached GitHub: a read is sent again, a creating POST is
// not, and its caller looks for its effect first (ambiguous); the caller's own deadline ends all.
func TestAttemptTimeoutDecisions(t *testing.T) {
	r := &retrying{now: time.Now}
	late := fmt.Errorf("Post %q: %w", "https://api.github.com/x", &AttemptTimeoutError{Limit: time.Minute})
	if _, retry := r.decide(nil, nil, late, 1, true); !retry {
		t.Error("a late read must be sent again")
	}
	if _, retry := r.decide(nil, nil, late, 1, false); retry {
		t.Error("a late POST must not be sent again blindly")
	}
	if !ambiguous(late) || ambiguous(context.DeadlineExceeded) {
		t.Error("a late POST is ambiguous; the caller's deadline is not")
	}
}
