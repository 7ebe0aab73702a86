package githubapi

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

const (
	checkKey  = "cdk/review/app"
	checkHead = "4678020cb0684678020cb0684678020cb0684678"
	checkPOST = "POST /repos/acme/shop/check-runs"
)

var gateway = ghserver.Response{Status: 502, Body: `{"message":"Server Error"}`}

// verdict is one run's check run: cdkbot's name, the review's key, the head.
func verdict(run, conclusion string) CheckRun {
	return CheckRun{Name: "cdkbot", HeadSHA: checkHead, Conclusion: conclusion, Title: conclusion,
		Summary: "run " + run + ": " + conclusion, ExternalID: CheckRunExternalID(checkKey, checkHead, run)}
}

// named returns the check runs called cdkbot on the head, oldest first.
func named(srv *ghserver.Server) []*ghserver.CheckRun {
	var out []*ghserver.CheckRun
	for _, cr := range srv.CheckRuns {
		if cr.Name == "cdkbot" && cr.HeadSHA == checkHead {
			out = append(out, cr)
		}
	}
	return out
}

// The lost answer: run A left a success; run B, whose verdict is failure, has its create
// answered 502 before GitHub acted. Run A's check run is never taken as B's: B's create is sent
// again (bounded), and when it never goes through, A's check run is updated to B's verdict and
// the answer says so. Either way no check run called cdkbot on the head still says success.
func TestLostCheckRunNeverLeavesAnEarlierVerdict(t *testing.T) {
	for _, c := range []struct {
		name     string
		runA     string // "" is the form without a run, shared by every run
		runB     string
		failures int
		creates  int // POSTs run B sends
		runs     int // check runs called cdkbot on the head afterwards
		replaced bool
	}{
		{"one 502, sent again", "76.1", "77.1", 1, 2, 2, false},
		{"every create fails: A's is updated", "76.1", "77.1", 5, 3, 1, true},
		{"a re-run attempt", "77.1", "77.2", 5, 3, 1, true},
		{"ids without a run: the one found is updated", "", "", 1, 1, 1, false},
		{"ids without a run, every create fails", "", "", 5, 1, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := ghserver.New(t, token)
			var sleeps []time.Duration
			ctx := context.Background()
			if _, err := client(t, srv, token, &sleeps).CompleteCheckRun(ctx, verdict(c.runA, "success")); err != nil {
				t.Fatal(err)
			}
			a := srv.CheckRuns[0]
			// Check runs that are not this review's are left alone.
			other := verdict("76.1", "success")
			other.ExternalID = CheckRunExternalID("cdk/review/other-app", checkHead, "76.1")
			lint := verdict("76.1", "success")
			lint.Name = "lint"
			for _, cr := range []CheckRun{other, lint} {
				if _, err := client(t, srv, token, &sleeps).CompleteCheckRun(ctx, cr); err != nil {
					t.Fatal(err)
				}
			}
			for range c.failures {
				srv.Fail[checkPOST] = append(srv.Fail[checkPOST], gateway)
			}
			before := srv.Count("checks/create")

			url, err := client(t, srv, token, &sleeps).CompleteCheckRun(ctx, verdict(c.runB, "failure"))

			if n := srv.Count("checks/create") - before; n != c.creates {
				t.Errorf("run B sent %d creates, want %d", n, c.creates)
			}
			// What branch protection reads is the newest check run of the name; when run B's was
			// never created, no check run of the review is left saying anything but B's verdict.
			var ours []*ghserver.CheckRun
			for _, cr := range named(srv) {
				if cr.ExternalID != other.ExternalID {
					ours = append(ours, cr)
				}
			}
			if len(ours) != c.runs {
				t.Fatalf("%d check runs of this review on the head, want %d", len(ours), c.runs)
			}
			newest := ours[len(ours)-1]
			if newest.Conclusion != "failure" || newest.Title != "failure" || newest.Summary != "run "+c.runB+": failure" {
				t.Errorf("the newest check run %d (%s) says %s %q: an earlier run's verdict",
					newest.ID, newest.ExternalID, newest.Conclusion, newest.Summary)
			}
			if srv.CheckRuns[1].Conclusion != "success" || srv.CheckRuns[2].Conclusion != "success" {
				t.Error("updated another review's or another check's run")
			}
			var nc *NotCreatedError
			switch {
			case c.replaced:
				if !errors.As(err, &nc) || nc.Update != nil || len(nc.Updated) != 1 || nc.Updated[0] != a.ID ||
					url != "https://github.test/acme/shop/runs/"+itoa(a.ID) ||
					!strings.Contains(err.Error(), "now carries this run's verdict instead") {
					t.Errorf("url %q, err %v", url, err)
				}
			case err != nil || url == "":
				t.Errorf("url %q, err %v", url, err)
			}
		})
	}
}

// Every check run earlier runs of the review left on the head is updated, those with the id
// cdkbot gave before ids named their run too; the answer links the newest.
func TestEveryEarlierCheckRunIsUpdated(t *testing.T) {
	srv := ghserver.New(t, token)
	var sleeps []time.Duration
	ctx := context.Background()
	for _, run := range []string{"", "75.1", "76.1"} {
		if _, err := client(t, srv, token, &sleeps).CompleteCheckRun(ctx, verdict(run, "success")); err != nil {
			t.Fatal(err)
		}
	}
	srv.Fail[checkPOST] = []ghserver.Response{gateway, gateway, gateway}
	url, err := client(t, srv, token, &sleeps).CompleteCheckRun(ctx, verdict("77.1", "failure"))
	var nc *NotCreatedError
	if !errors.As(err, &nc) || nc.Update != nil || len(nc.Updated) != 3 ||
		url != "https://github.test/acme/shop/runs/"+itoa(srv.CheckRuns[2].ID) ||
		!strings.Contains(err.Error(), "check runs 1001, 1002, 1003, left on that commit by earlier runs of this review") {
		t.Fatalf("url %q, err %v", url, err)
	}
	for _, cr := range srv.CheckRuns {
		if cr.Conclusion != "failure" || cr.Summary != "run 77.1: failure" {
			t.Errorf("check run %d (%s) says %s", cr.ID, cr.ExternalID, cr.Conclusion)
		}
	}
}

// GitHub created run B's check run and the answer was lost (a 502 after acting, or the
// connection closed): it is found by its own external id, not created twice, and run A's is
// not touched.
func TestLostAnswerFindsThisRunsOwnCheckRun(t *testing.T) {
	for name, fault := range map[string]func(*ghserver.Server){
		"502 after acting": func(s *ghserver.Server) { s.FailAfter[checkPOST] = []ghserver.Response{gateway} },
		"answer dropped":   func(s *ghserver.Server) { s.Drop[checkPOST] = 1 },
	} {
		t.Run(name, func(t *testing.T) {
			srv := ghserver.New(t, token)
			var sleeps []time.Duration
			ctx := context.Background()
			if _, err := client(t, srv, token, &sleeps).CompleteCheckRun(ctx, verdict("76.1", "success")); err != nil {
				t.Fatal(err)
			}
			fault(srv)
			url, err := client(t, srv, token, &sleeps).CompleteCheckRun(ctx, verdict("77.1", "failure"))
			runs := named(srv)
			if err != nil || len(runs) != 2 || srv.Count("checks/create") != 2 || srv.Count("checks/update") != 0 {
				t.Fatalf("url %q, err %v; %d check runs, %d creates, %d updates",
					url, err, len(runs), srv.Count("checks/create"), srv.Count("checks/update"))
			}
			if b := runs[1]; url != "https://github.test/acme/shop/runs/"+itoa(b.ID) || b.Conclusion != "failure" ||
				runs[0].Conclusion != "success" {
				t.Errorf("url %q; runs %+v %+v", url, runs[0], runs[1])
			}
		})
	}
}

// When run B's check run can be neither created nor stood in for by updating run A's, the
// answer is an error that says the commit may still show an earlier verdict: never success.
func TestCheckRunFailsClosed(t *testing.T) {
	srv := ghserver.New(t, token)
	var sleeps []time.Duration
	ctx := context.Background()
	if _, err := client(t, srv, token, &sleeps).CompleteCheckRun(ctx, verdict("76.1", "success")); err != nil {
		t.Fatal(err)
	}
	srv.Fail[checkPOST] = []ghserver.Response{gateway, gateway, gateway}
	patch := "PATCH /repos/acme/shop/check-runs/" + itoa(srv.CheckRuns[0].ID)
	srv.Fail[patch] = []ghserver.Response{gateway, gateway, gateway, gateway}
	url, err := client(t, srv, token, &sleeps).CompleteCheckRun(ctx, verdict("77.1", "failure"))
	var nc *NotCreatedError
	if !errors.As(err, &nc) || nc.Update == nil || url != "" ||
		!strings.Contains(err.Error(), "may still show an earlier verdict") {
		t.Fatalf("url %q, err %v", url, err)
	}
	// A run without an id of its own stays unconfirmed too when the one found cannot be updated.
	srv.Fail[checkPOST] = []ghserver.Response{gateway}
	srv.Fail[patch] = []ghserver.Response{gateway, gateway, gateway, gateway}
	srv.CheckRuns[0].ExternalID = CheckRunExternalID(checkKey, checkHead, "")
	url, err = client(t, srv, token, &sleeps).CompleteCheckRun(ctx, verdict("", "failure"))
	if !errors.As(err, &nc) || nc.Update == nil || url != "" {
		t.Fatalf("without a run: url %q, err %v", url, err)
	}
}

func TestCheckRunExternalID(t *testing.T) {
	long := strings.Repeat("workflow/", 40)
	for _, c := range []struct {
		key, sha, run string
		want          string
		review        string
	}{
		{"cdk/review/app", "abc", "5678.2", "cdk/review/app@abc@5678.2", "cdk/review/app@abc"},
		{"cdk/review/app", "abc", "5678", "cdk/review/app@abc@5678", "cdk/review/app@abc"},
		{"cdk/review/app", "abc", "", "cdk/review/app@abc", "cdk/review/app@abc"},
		{"me@example/review/.", "abc", "9.1", "me@example/review/.@abc@9.1", "me@example/review/.@abc"},
		{"cdk/review/app", "abc", "not@a-run", "cdk/review/app@abc", "cdk/review/app@abc"},
		{long, checkHead, "12345678901.3", "sha256:d2d4b5dc4e5ba4c0a5bbc2b9e8b3e35c@" + checkHead + "@12345678901.3",
			"sha256:d2d4b5dc4e5ba4c0a5bbc2b9e8b3e35c@" + checkHead},
	} {
		got := CheckRunExternalID(c.key, c.sha, c.run)
		if c.key == long {
			// The digest's value is not the point; its shape and stability are.
			c.want, c.review = got, strings.TrimSuffix(got, "@12345678901.3")
			if !strings.HasPrefix(got, "sha256:") || len(got) > maxExternalID || got != CheckRunExternalID(c.key, c.sha, c.run) {
				t.Errorf("long key: %q", got)
			}
		}
		if got != c.want {
			t.Errorf("CheckRunExternalID(%q, %q, %q) = %q, want %q", c.key, c.sha, c.run, got, c.want)
		}
		review, run := splitExternalID(got, c.sha)
		wantRun := c.run
		if !runPattern().MatchString(c.run) {
			wantRun = ""
		}
		if review != c.review || run != wantRun {
			t.Errorf("splitExternalID(%q) = %q, %q", got, review, run)
		}
	}
	// An id cdkbot did not make is its own review part, with no run.
	if review, run := splitExternalID("k", "abc"); review != "k" || run != "" {
		t.Errorf("foreign id: %q %q", review, run)
	}
}

func itoa(n int64) string { return ids([]int64{n}) }
