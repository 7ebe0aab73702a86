package cli

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

// The lost answer of issue #24, through the action: run A's check run says success; bob's
// approving review is then dismissed; run B, which blocks, has every create of its check run
// answered 502 before GitHub acted. Run A's check run is not taken for run B's: it is updated to
// run B's verdict, so every check run called cdkbot on the head says failure, a warning names
// it, and the job fails.
func TestActionLostCheckRunAnswerLeavesNoStaleSuccess(t *testing.T) {
	const head, base = "4678020cb068", "9f2c1a0b7d4e"
	srv := ghserver.New(t, actionToken)
	srv.Permissions["bob"] = "write"
	event := func(action string) string {
		return realEvent(t, "pull_request_review", action, func(p map[string]any) {
			set(p, "pull_request.number", 42)
			set(p, "pull_request.user.login", "dev")
			set(p, "pull_request.head.sha", head)
			set(p, "pull_request.base.sha", base)
			set(p, "pull_request.head.repo.full_name", "acme/shop")
			set(p, "pull_request.base.repo.full_name", "acme/shop")
			set(p, "pull_request.labels", []any{})
		})
	}
	runAs := func(action, runID string) (int, string) {
		t.Helper()
		actionEnv(t, srv, actionToken, "pull_request_review", event(action))
		t.Setenv("INPUT_APPROVAL", "review")
		t.Setenv("GITHUB_RUN_ID", runID)
		t.Setenv("GITHUB_RUN_ATTEMPT", "1")
		code, stdout, stderr := run(t, "action")
		return code, stdout + stderr
	}

	srv.Reviews[42] = []ghserver.Review{{User: "bob", State: "APPROVED", CommitID: head}}
	if code, out := runAs("submitted", "5001"); code != ExitOK || len(srv.CheckRuns) != 1 ||
		srv.CheckRuns[0].Conclusion != "success" {
		t.Fatalf("run A: exit %d, check runs %+v\n%s", code, srv.CheckRuns, out)
	}
	a := srv.CheckRuns[0]

	srv.Reviews[42][0].State = "DISMISSED"
	gateway := ghserver.Response{Status: 502, Body: `{"message":"Server Error"}`}
	srv.Fail["POST /repos/acme/shop/check-runs"] = []ghserver.Response{gateway, gateway, gateway, gateway, gateway}
	code, out := runAs("dismissed", "5002")
	if code == ExitOK {
		t.Errorf("run B: exit 0 while its verdict is failure\n%s", out)
	}
	named := 0
	for _, cr := range srv.CheckRuns {
		if cr.Name != "cdkbot" || cr.HeadSHA != head {
			continue
		}
		named++
		if cr.Conclusion != "failure" || !strings.Contains(cr.Title, "needs approval") {
			t.Errorf("check run %d (%s) still says %s %q after run B blocked", cr.ID, cr.ExternalID, cr.Conclusion, cr.Title)
		}
	}
	if named == 0 {
		t.Error("no check run called cdkbot on the head")
	}
	url := "https://github.test/acme/shop/runs/" + strconv.FormatInt(a.ID, 10)
	if !strings.Contains(out, "::warning::cdkbot: check run cdkbot: failure ("+url+"): ") ||
		!strings.Contains(out, "left on that commit by an earlier run of this review, now carries this run's verdict instead") {
		t.Errorf("no warning naming the updated check run:\n%s", out)
	}
}
