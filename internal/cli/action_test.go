package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

const actionToken = "ghs_actiontoken0123456789"

// actionEnv sets up a GitHub Actions environment for one event.
func actionEnv(t *testing.T, srv *ghserver.Server, event, payload string) (output, summary string) {
	t.Helper()
	dir := t.TempDir()
	output, summary = filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	abs, _ := filepath.Abs(filepath.Join("testdata", "events", payload))
	demo, _ := filepath.Abs("demo")
	for k, v := range map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": abs, "GITHUB_REPOSITORY": "acme/shop",
		"GITHUB_API_URL": srv.URL, "GITHUB_GRAPHQL_URL": srv.URL + "/graphql", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_WORKFLOW": "cdk", "GITHUB_JOB": "review", "GITHUB_RUN_ID": "77", "GITHUB_OUTPUT": output, "GITHUB_STEP_SUMMARY": summary,
		"RUNNER_TEMP": dir, "INPUT_GITHUB-TOKEN": actionToken, "INPUT_WORKING-DIRECTORY": demo,
		"INPUT_BASE-ASSEMBLY": "before", "INPUT_HEAD-ASSEMBLY": "after", "INPUT_COMMENT": "", "INPUT_CONFIG": "", "INPUT_FAIL-ON": "",
		"INPUT_OVERRIDE-LABEL": "",
	} {
		t.Setenv(k, v)
	}
	return output, summary
}

func TestActionPullRequests(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	srv.Login = "github-actions[bot]"

	// Opened: a comment is created, and the destructive change fails the check.
	output, summary := actionEnv(t, srv, "pull_request", "pull_request_opened.json")
	code, stdout, stderr := run(t, "action")
	if code != ExitVerdict {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitVerdict, stdout, stderr)
	}
	if got := strings.Join(srv.Calls, "\n"); got != "GET /repos/acme/shop/issues/42/comments?per_page=100\nPOST /repos/acme/shop/issues/42/comments" {
		t.Errorf("calls:\n%s", got)
	}
	if len(srv.Comments[42]) != 1 || !strings.HasPrefix(srv.Comments[42][0].Body, `<!-- cdkbot:{"tool":"cdkbot","key":"cdk/review/`) {
		t.Fatalf("comment: %+v", srv.Comments[42])
	}
	if !strings.Contains(stdout, "::error::cdkbot: gate destroy-stateful blocks this pull request") {
		t.Errorf("no error annotation:\n%s", stdout)
	}
	if strings.Count(stdout, actionToken) != 1 || !strings.Contains(stdout, "::add-mask::"+actionToken) {
		t.Errorf("the token must be masked first and appear nowhere else:\n%s", stdout)
	}
	out, _ := os.ReadFile(output)
	for _, want := range []string{"has-changes", "true", "replacements", "destroys", "security-broadening", "report-file"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("outputs lack %q:\n%s", want, out)
		}
	}
	if sum, _ := os.ReadFile(summary); !strings.Contains(string(sum), "### cdkbot review:") {
		t.Error("no job summary")
	}

	// Synchronize with the approval label: the same comment is edited, never duplicated.
	n := len(srv.Calls)
	actionEnv(t, srv, "pull_request", "pull_request_synchronize.json")
	code, stdout, _ = run(t, "action")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	calls := srv.CallsSince(n)
	if len(calls) != 2 || !strings.HasPrefix(calls[1], "PATCH /repos/acme/shop/issues/comments/") || len(srv.Comments[42]) != 1 {
		t.Errorf("second run: %v, %d comments", calls, len(srv.Comments[42]))
	}
	if !strings.Contains(srv.Comments[42][0].Body, "overrode it") {
		t.Error("the comment does not say the label overrode the gate")
	}
}

func TestActionForkPullRequestDoesNotWrite(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	_, summary := actionEnv(t, srv, "pull_request", "pull_request_fork.json")
	code, stdout, _ := run(t, "action")
	if code != ExitVerdict || len(srv.Calls) != 0 {
		t.Fatalf("exit %d, calls %v", code, srv.Calls)
	}
	if !strings.Contains(stdout, "comes from a fork") || !strings.Contains(stdout, "cdkbot action comment --report") {
		t.Errorf("no explanation of the two-workflow pattern:\n%s", stdout)
	}
	if sum, _ := os.ReadFile(summary); !strings.Contains(string(sum), "### cdkbot review:") {
		t.Error("the review must still reach the job summary")
	}
	// The trusted workflow posts the saved report.
	report := filepath.Join(os.Getenv("RUNNER_TEMP"), "cdkbot-report.json")
	code, stdout, stderr := run(t, "action", "comment", "--report", report)
	if code != ExitOK || len(srv.Comments[42]) != 1 {
		t.Fatalf("comment --report: %d %s %s", code, stdout, stderr)
	}
}

func TestActionOtherEventsAreNoOps(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	actionEnv(t, srv, "push", "push.json")
	code, stdout, _ := run(t, "action")
	if code != ExitOK || len(srv.Calls) != 0 || !strings.Contains(stdout, `::notice::cdkbot: push to "feature/login", not the default branch "main": nothing to deploy`) {
		t.Errorf("push: %d %v\n%s", code, srv.Calls, stdout)
	}
	actionEnv(t, srv, "schedule", "push.json")
	if code, stdout, _ := run(t, "action"); code != ExitOK || !strings.Contains(stdout, `nothing to do for the "schedule" event`) {
		t.Errorf("schedule: %d\n%s", code, stdout)
	}
}

// `/cdkbot review` on a pull request re-runs the review: the PR is read from the API, and the
// sticky comment is written (with the PR's labels: here, approved).
func TestActionIssueCommentReview(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	srv.Login = "github-actions[bot]"
	pr, _ := os.ReadFile(filepath.Join("testdata", "events", "pull_42.json"))
	srv.Pulls[42] = string(pr)
	actionEnv(t, srv, "issue_comment", "issue_comment_review.json")
	code, stdout, _ := run(t, "action")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if got := strings.Join(srv.Calls, "\n"); got != "GET /repos/acme/shop/pulls/42\nGET /repos/acme/shop/issues/42/comments?per_page=100\nPOST /repos/acme/shop/issues/42/comments" {
		t.Errorf("calls:\n%s", got)
	}
	if !strings.Contains(srv.Comments[42][0].Body, "overrode it") {
		t.Error("the PR's labels were not used")
	}
}
