package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/ghspec"
)

const actionToken = "ghs_actiontoken0123456789"

// realEvent writes the first real payload of event with action (@octokit/webhooks-examples)
// with patch applied, and returns its path: the action parses what GitHub really sends.
func realEvent(t *testing.T, event, action string, patch func(p map[string]any)) string {
	t.Helper()
	for _, h := range ghspec.Webhooks(t, event) {
		if action != "" && h.Action != action {
			continue
		}
		var p map[string]any
		if err := json.Unmarshal(h.Payload, &p); err != nil {
			t.Fatal(err)
		}
		set(p, "repository.full_name", "acme/shop")
		set(p, "repository.name", "shop")
		set(p, "repository.owner.login", "acme")
		if patch != nil {
			patch(p)
		}
		path := filepath.Join(t.TempDir(), event+".json")
		writeJSONFile(t, path, p)
		return path
	}
	t.Fatalf("no %s/%s example", event, action)
	return ""
}

// set assigns a dotted path in a JSON object, creating objects on the way.
func set(m map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}

// prEvent is a real pull_request payload for #42 by dev, head h, base b.
func prEvent(t *testing.T, action, head, base string, labels ...string) string {
	return realEvent(t, "pull_request", action, func(p map[string]any) {
		p["number"] = 42
		set(p, "pull_request.number", 42)
		set(p, "pull_request.user.login", "dev")
		set(p, "pull_request.head.sha", head)
		set(p, "pull_request.base.sha", base)
		set(p, "pull_request.head.repo.full_name", "acme/shop")
		set(p, "pull_request.head.repo.fork", false)
		set(p, "pull_request.base.repo.full_name", "acme/shop")
		set(p, "pull_request.merge_commit_sha", nil)
		var ls []any
		for _, l := range labels {
			ls = append(ls, map[string]any{"name": l})
		}
		set(p, "pull_request.labels", ls)
	})
}

// actionEnv sets up a GitHub Actions environment for one event.
func actionEnv(t *testing.T, srv *ghserver.Server, token, event, payload string) (output, summary string) {
	t.Helper()
	dir := t.TempDir()
	output, summary = filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	demo, _ := filepath.Abs("demo")
	for k, v := range map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": payload, "GITHUB_REPOSITORY": "acme/shop",
		"GITHUB_API_URL": srv.APIURL(), "GITHUB_GRAPHQL_URL": srv.GraphQLURL(), "GITHUB_SERVER_URL": "https://github.com", "GITHUB_SHA": "",
		"GITHUB_WORKFLOW": "cdk", "GITHUB_JOB": "review", "GITHUB_RUN_ID": "77", "GITHUB_OUTPUT": output, "GITHUB_STEP_SUMMARY": summary,
		"RUNNER_TEMP": dir, "INPUT_GITHUB-TOKEN": token, "INPUT_WORKING-DIRECTORY": demo,
		// The demo's change also alters an export in use (blocked whatever the approval): these
		// tests are about approvals, so they gate on destroy-stateful alone.
		"INPUT_BASE-ASSEMBLY": "before", "INPUT_HEAD-ASSEMBLY": "after", "INPUT_COMMENT": "", "INPUT_CONFIG": "", "INPUT_FAIL-ON": "destroy-stateful",
		"INPUT_OVERRIDE-LABEL": "", "INPUT_APPROVAL": "", "INPUT_CHECK-NAME": "",
		// Tests that synthesize do it as the test's own user (the sandbox has tests of its own).
		"INPUT_SYNTH-USER": "none",
	} {
		t.Setenv(k, v)
	}
	return output, summary
}

// A pull request with a destructive change, through every token kind: the check run fails and
// one comment is written; the author's own label does not approve; a maintainer's label does,
// and the comment names who approved. Two runs with the same review leave the comment alone.
func TestActionPullRequestsForEveryTokenKind(t *testing.T) {
	for _, c := range []struct {
		name    string
		flavour ghspec.Flavour
		token   string
		who     ghserver.Identity
	}{
		{"Actions token", ghspec.DotCom, actionToken, ghserver.ActionsToken},
		{"App installation token", ghspec.DotCom, "ghs_apptoken", ghserver.AppToken},
		{"personal access token", ghspec.DotCom, "github_pat_11ABC", ghserver.PAT},
		{"GHES", ghspec.GHES, "ghs_ghes", ghserver.ActionsToken},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := ghserver.NewWith(t, ghserver.Options{Flavour: c.flavour, Tokens: map[string]ghserver.Identity{c.token: c.who}})
			srv.Permissions["dev"], srv.Permissions["bob"] = "write", "maintain"

			output, summary := actionEnv(t, srv, c.token, "pull_request", prEvent(t, "opened", "4678020cb068", "9f2c1a0b7d4e"))
			code, stdout, stderr := run(t, "action")
			if code != ExitVerdict {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitVerdict, stdout, stderr)
			}
			if len(srv.Comments[42]) != 1 || !strings.HasPrefix(srv.Comments[42][0].Body, `<!-- cdkbot:{"tool":"cdkbot","key":"cdk/review/`) ||
				srv.Comments[42][0].User != c.who.REST() {
				t.Fatalf("comment: %+v", srv.Comments[42])
			}
			if len(srv.CheckRuns) != 1 || srv.CheckRuns[0].Name != "cdkbot" || srv.CheckRuns[0].HeadSHA != "4678020cb068" ||
				srv.CheckRuns[0].Conclusion != "failure" || !strings.HasPrefix(srv.CheckRuns[0].Title, "⚠️ needs approval · ") ||
				len(srv.CheckRuns[0].Annotations) == 0 || strings.Contains(srv.CheckRuns[0].Summary, "<!-- cdkbot") {
				t.Errorf("check run: %+v", srv.CheckRuns)
			}
			if !strings.Contains(stdout, "::error::cdkbot: gate destroy-stateful blocks this change") {
				t.Errorf("no error annotation:\n%s", stdout)
			}
			if strings.Count(stdout, c.token) != 1 || !strings.Contains(stdout, "::add-mask::"+c.token) {
				t.Errorf("the token must be masked first and appear nowhere else:\n%s", stdout)
			}
			out, _ := os.ReadFile(output)
			for _, want := range []string{"has-changes", "true", "replacements", "destroys", "security-broadening", "report-file"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("outputs lack %q:\n%s", want, out)
				}
			}
			if sum, _ := os.ReadFile(summary); !strings.Contains(string(sum), " · cdkbot review\n") {
				t.Error("no job summary")
			}

			// The author labels their own change: it does not count, and the comment says why.
			srv.Label(42, "cdkbot/approve-destructive", "dev")
			actionEnv(t, srv, c.token, "pull_request", prEvent(t, "labeled", "4678020cb068", "9f2c1a0b7d4e", "cdkbot/approve-destructive"))
			if code, stdout, _ = run(t, "action"); code != ExitVerdict {
				t.Fatalf("self-approval: exit %d\n%s", code, stdout)
			}
			if body := srv.Body(42); len(srv.Comments[42]) != 1 || !strings.Contains(body, "The approval by dev \\(label cdkbot/approve-destructive\\) does not count: dev is the pull request's author") {
				t.Errorf("self-approval comment:\n%s", body)
			}

			// A maintainer applies it again after reading the review: approved, the same comment
			// edited, the check run passes.
			srv.Unlabel(42, "cdkbot/approve-destructive", "bob")
			srv.Label(42, "cdkbot/approve-destructive", "bob")
			code, stdout, _ = run(t, "action")
			if code != ExitOK {
				t.Fatalf("approved: exit %d\n%s", code, stdout)
			}
			body := srv.Body(42)
			if len(srv.Comments[42]) != 1 || !strings.Contains(body, "approved by bob \\(label cdkbot/approve-destructive\\)") {
				t.Errorf("approved comment (%d comments):\n%s", len(srv.Comments[42]), body)
			}
			if last := srv.CheckRuns[len(srv.CheckRuns)-1]; last.Conclusion != "success" || last.Annotations[0]["annotation_level"] != "warning" {
				t.Errorf("approved check run: %+v", last)
			}
			// Again, unchanged: no edit.
			edits := srv.Count("issues/update-comment")
			if code, _, _ = run(t, "action"); code != ExitOK || srv.Count("issues/update-comment") != edits || len(srv.Comments[42]) != 1 {
				t.Errorf("a rerun edited or added a comment: exit %d, %d edits before, %d after", code, edits, srv.Count("issues/update-comment"))
			}
			if n := srv.Count("users/get-authenticated"); n != 0 {
				t.Errorf("GET /user called %d times", n)
			}
		})
	}
}

// A token without checks: write (403) still comments; the verdict is the exit code, with a notice.
func TestActionCheckRunForbidden(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	srv.Fail["POST /repos/acme/shop/check-runs"] = []ghserver.Response{{Status: 403, Body: `{"message":"Resource not accessible by integration"}`}}
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "opened", "4678020cb068", "9f2c1a0b7d4e"))
	code, stdout, _ := run(t, "action")
	if code != ExitVerdict || len(srv.Comments[42]) != 1 || !strings.Contains(stdout, "the token cannot create check runs (it needs `checks: write`") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
}

func TestActionForkPullRequestDoesNotWrite(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	fork := realEvent(t, "pull_request", "opened", func(p map[string]any) {
		p["number"] = 42
		set(p, "pull_request.number", 42)
		set(p, "pull_request.head.sha", "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0")
		set(p, "pull_request.head.ref", "topic")
		set(p, "pull_request.head.repo.full_name", "mallory/shop")
		set(p, "pull_request.head.repo.fork", true)
		set(p, "pull_request.base.repo.full_name", "acme/shop")
	})
	_, summary := actionEnv(t, srv, actionToken, "pull_request", fork)
	code, stdout, _ := run(t, "action")
	if code != ExitVerdict || len(srv.Calls) != 0 {
		t.Fatalf("exit %d, calls %v", code, srv.Calls)
	}
	if !strings.Contains(stdout, "comes from a fork") || !strings.Contains(stdout, "cdkbot action comment --report") {
		t.Errorf("no explanation of the two-workflow pattern:\n%s", stdout)
	}
	if sum, _ := os.ReadFile(summary); !strings.Contains(string(sum), " · cdkbot review\n") {
		t.Error("the review must still reach the job summary")
	}
	// The trusted workflow_run job posts the saved report: on the pull request of the run that
	// triggered it (GitHub names none for forks: found by head), re-rendered from its data.
	report := filepath.Join(os.Getenv("RUNNER_TEMP"), "cdkbot-report.json")
	srv.Pulls[42] = &ghserver.PullRequest{Number: 42, Author: "mallory", HeadSHA: "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0", HeadRef: "topic",
		HeadRepo: "mallory/shop", BaseRef: "main", BaseSHA: "b0"}
	runEvent := func(head string) string {
		return realEvent(t, "workflow_run", "completed", func(p map[string]any) {
			set(p, "workflow_run.event", "pull_request")
			set(p, "workflow_run.head_sha", head)
			set(p, "workflow_run.head_branch", "topic")
			set(p, "workflow_run.head_repository.owner.login", "mallory")
			set(p, "workflow_run.pull_requests", []any{})
		})
	}
	temp := os.Getenv("RUNNER_TEMP")
	actionEnv(t, srv, actionToken, "workflow_run", runEvent("f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0"))
	t.Setenv("RUNNER_TEMP", temp)
	raw, _ := os.ReadFile(report)
	var saved map[string]any
	json.Unmarshal(raw, &saved)
	saved["comment"] = saved["comment"].(string) + "\n@everyone ![x](https://evil.test/x.png) [log in](https://evil.test)"
	writeJSONFile(t, report, saved)
	code, stdout, stderr := run(t, "action", "comment", "--report", report)
	if code != ExitOK || len(srv.Comments[42]) != 1 {
		t.Fatalf("comment --report: %d %s %s", code, stdout, stderr)
	}
	body := srv.Body(42)
	if !strings.Contains(body, `"unverified":true`) || !strings.Contains(body, "comes from a fork") || strings.Contains(body, "evil.test") ||
		strings.Contains(body, "@everyone") || !strings.Contains(body, "**Blocked by `destroy-stateful`**") {
		t.Errorf("re-rendered comment:\n%s", body)
	}
	// A report for another pull request, or from another run's commit, is refused.
	saved["pullRequest"] = 43.0
	writeJSONFile(t, report, saved)
	if code, _, stderr := run(t, "action", "comment", "--report", report); code != ExitUsage || !strings.Contains(stderr, "names pull request #43, but the triggering run is of #42") {
		t.Errorf("another PR: exit %d %s", code, stderr)
	}
	saved["pullRequest"] = 42.0
	writeJSONFile(t, report, saved)
	actionEnv(t, srv, actionToken, "workflow_run", runEvent("e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1"))
	t.Setenv("RUNNER_TEMP", temp)
	if code, _, stderr := run(t, "action", "comment", "--report", report); code != ExitUsage || !strings.Contains(stderr, "no open pull request has the triggering run's head e1e1e1e") {
		t.Errorf("another commit: exit %d %s", code, stderr)
	}
	// Only a workflow_run job can post one.
	actionEnv(t, srv, actionToken, "pull_request", fork)
	if code, _, stderr := run(t, "action", "comment", "--report", report); code != ExitUsage || !strings.Contains(stderr, "from a job triggered by workflow_run") {
		t.Errorf("not workflow_run: exit %d %s", code, stderr)
	}
}

func TestActionOtherEventsAreNoOps(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	push := realEvent(t, "push", "", func(p map[string]any) {
		p["ref"] = "refs/heads/feature/login"
		set(p, "repository.default_branch", "main")
	})
	actionEnv(t, srv, actionToken, "push", push)
	code, stdout, _ := run(t, "action")
	if code != ExitOK || len(srv.Calls) != 0 || !strings.Contains(stdout, `::notice::cdkbot: push to "feature/login", not the default branch "main": nothing to deploy`) {
		t.Errorf("push: %d %v\n%s", code, srv.Calls, stdout)
	}
	actionEnv(t, srv, actionToken, "schedule", push)
	if code, stdout, _ := run(t, "action"); code != ExitOK || !strings.Contains(stdout, `nothing to do for the "schedule" event`) {
		t.Errorf("schedule: %d\n%s", code, stdout)
	}
}

// `/cdkbot review` on a pull request re-runs the review: the PR is read from the API, and the
// sticky comment is written (approved by a maintainer's label).
func TestActionIssueCommentReview(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	srv.Pulls[42] = &ghserver.PullRequest{Number: 42, Title: "checkout v2", Author: "dev", HeadSHA: "4678020cb068", HeadRef: "checkout-v2",
		BaseSHA: "9f2c1a0b7d4e", BaseRef: "main"}
	srv.Permissions["bob"] = "admin"
	ev := realEvent(t, "issue_comment", "created", func(p map[string]any) {
		set(p, "issue.number", 42)
		set(p, "issue.pull_request", map[string]any{"url": "https://api.github.com/repos/acme/shop/pulls/42"})
		set(p, "comment.body", "/cdkbot review")
	})
	actionEnv(t, srv, actionToken, "issue_comment", ev)
	if code, stdout, _ := run(t, "action"); code != ExitVerdict {
		t.Fatalf("before the approval: exit %d\n%s", code, stdout)
	}
	// bob approves what the comment shows, then asks for a review.
	srv.Label(42, "cdkbot/approve-destructive", "bob")
	code, stdout, _ := run(t, "action")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if !strings.Contains(srv.Body(42), "approved by bob") || len(srv.CheckRuns) != 2 || srv.CheckRuns[1].HeadSHA != "4678020cb068" {
		t.Errorf("comment:\n%s\nchecks %+v", srv.Body(42), srv.CheckRuns)
	}
	// Any other comment is not a command.
	actionEnv(t, srv, actionToken, "issue_comment", realEvent(t, "issue_comment", "created", func(p map[string]any) {
		set(p, "issue.pull_request", map[string]any{"url": "https://api.github.com/repos/acme/shop/pulls/42"})
		set(p, "comment.body", "looks good")
	}))
	n := len(srv.Calls)
	if code, stdout, _ := run(t, "action"); code != ExitOK || len(srv.CallsSince(n)) != 0 || !strings.Contains(stdout, "is not `/cdkbot review`") {
		t.Errorf("plain comment: %d %v\n%s", code, srv.CallsSince(n), stdout)
	}
}

// A merge queue entry is gated through the check run on the queue's head commit and the exit
// code; no comment. The queued pull request's approval counts.
func TestActionMergeGroup(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	mg := func() string {
		return realEvent(t, "merge_group", "checks_requested", func(p map[string]any) {
			set(p, "merge_group.head_sha", "2ffea6db159f")
			set(p, "merge_group.base_sha", "380387fbc806")
			set(p, "merge_group.head_ref", "refs/heads/gh-readonly-queue/main/pr-42-929f8209d40f77f4abc622a499c93a83babdbe64")
		})
	}
	_, summary := actionEnv(t, srv, actionToken, "merge_group", mg())
	srv.Pulls[42] = &ghserver.PullRequest{Number: 42, Author: "dev", HeadSHA: "4678020cb068", BaseSHA: "380387fbc806", BaseRef: "main", HeadRef: "topic"}
	code, stdout, _ := run(t, "action")
	if code != ExitVerdict || len(srv.Comments) != 0 || len(srv.CheckRuns) != 1 || srv.CheckRuns[0].HeadSHA != "2ffea6db159f" ||
		srv.CheckRuns[0].Conclusion != "failure" {
		t.Fatalf("exit %d, comments %v, checks %+v\n%s", code, srv.Comments, srv.CheckRuns, stdout)
	}
	if sum, _ := os.ReadFile(summary); !strings.Contains(string(sum), " · cdkbot review\n") {
		t.Error("no job summary")
	}
	// The pull request's review comment (its own run, same key) showed what the queue entry
	// holds; bob approved it there.
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "opened", "4678020cb068", "380387fbc806"))
	if code, stdout, _ := run(t, "action"); code != ExitVerdict || len(srv.Comments[42]) != 1 {
		t.Fatalf("the pull request's review: exit %d\n%s", code, stdout)
	}
	srv.Label(42, "cdkbot/approve-destructive", "bob")
	srv.Permissions["bob"] = "write"
	actionEnv(t, srv, actionToken, "merge_group", mg())
	if code, stdout, _ = run(t, "action"); code != ExitOK || srv.CheckRuns[len(srv.CheckRuns)-1].Conclusion != "success" {
		t.Errorf("approved queue entry: exit %d\n%s", code, stdout)
	}
}

// pull_request_target runs with a write token and never runs the pull request's code: it reviews
// the assemblies a trusted job made, and writes the comment and the check run.
func TestActionPullRequestTarget(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	actionEnv(t, srv, actionToken, "pull_request_target", prEvent(t, "opened", "4678020cb068", "9f2c1a0b7d4e"))
	code, stdout, _ := run(t, "action")
	if code != ExitVerdict || len(srv.Comments[42]) != 1 || len(srv.CheckRuns) != 1 || strings.Contains(stdout, "synthesizing") {
		t.Errorf("exit %d, %d comments, %d checks\n%s", code, len(srv.Comments[42]), len(srv.CheckRuns), stdout)
	}
	// Without assemblies it says why it will not synthesize.
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	base := commitAssembly(t, dir, "bucket", "Bucket")
	os.RemoveAll(filepath.Join(dir, "cdk.out"))
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "no assembly")
	head := gitRun(t, dir, "rev-parse", "HEAD")
	actionEnv(t, srv, actionToken, "pull_request_target", prEvent(t, "opened", head, base))
	t.Setenv("INPUT_WORKING-DIRECTORY", dir)
	t.Setenv("INPUT_BASE-ASSEMBLY", "")
	t.Setenv("INPUT_HEAD-ASSEMBLY", "")
	code, stdout, stderr := run(t, "action")
	if code != ExitUsage || !strings.Contains(stdout, "pull_request_target runs with a write token") ||
		!strings.Contains(stderr, "synthesizing pull request code is not allowed here") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// With approval: review, a maintainer's approving review of the head commit approves; the
// pull_request_review event reviews again.
func TestActionApprovalByReview(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	srv.Permissions["bob"] = "write"
	ev := realEvent(t, "pull_request_review", "submitted", func(p map[string]any) {
		set(p, "pull_request.number", 42)
		set(p, "pull_request.user.login", "dev")
		set(p, "pull_request.head.sha", "4678020cb068")
		set(p, "pull_request.base.sha", "9f2c1a0b7d4e")
		set(p, "pull_request.head.repo.full_name", "acme/shop")
		set(p, "pull_request.base.repo.full_name", "acme/shop")
		set(p, "pull_request.labels", []any{})
	})
	actionEnv(t, srv, actionToken, "pull_request_review", ev)
	t.Setenv("INPUT_APPROVAL", "review")
	srv.Reviews[42] = []ghserver.Review{{User: "dev", State: "COMMENTED"}}
	if code, stdout, _ := run(t, "action"); code != ExitVerdict {
		t.Fatalf("no approval yet: exit %d\n%s", code, stdout)
	}
	srv.Reviews[42] = append(srv.Reviews[42], ghserver.Review{User: "bob", State: "APPROVED", CommitID: "4678020cb068"})
	code, stdout, _ := run(t, "action")
	if code != ExitOK || !strings.Contains(srv.Body(42), "approved by bob \\(approving review\\)") || len(srv.Comments[42]) != 1 {
		t.Errorf("exit %d\n%s\n%s", code, stdout, srv.Body(42))
	}
	t.Setenv("INPUT_APPROVAL", "anyone")
	if code, _, stderr := run(t, "action"); code != ExitUsage || !strings.Contains(stderr, "use label, review or label-or-review") {
		t.Errorf("bad input: exit %d %s", code, stderr)
	}
}

// rate-limit-wait bounds how long a rate limit is waited out: a reset further away fails the
// run at once, saying when it resets; a value that is not a duration is a usage error.
func TestActionRateLimitWait(t *testing.T) {
	srv := ghserver.NewWith(t, ghserver.Options{Tokens: map[string]ghserver.Identity{actionToken: ghserver.ActionsToken}})
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "opened", "4678020cb068", "9f2c1a0b7d4e"))
	srv.Fail["GET /repos/acme/shop/issues/42/comments"] = []ghserver.Response{{Status: 403, Headers: map[string]string{"Retry-After": "120"},
		Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`}}
	t.Setenv("INPUT_RATE-LIMIT-WAIT", "1s")
	code, stdout, stderr := run(t, "action")
	if code == ExitOK || code == ExitVerdict || !strings.Contains(stdout+stderr, "resets in 2m0s, longer than cdkbot waits (1s)") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Setenv("INPUT_RATE-LIMIT-WAIT", "five minutes")
	if code, stdout, stderr := run(t, "action"); code != ExitUsage || !strings.Contains(stdout+stderr, `input rate-limit-wait is "five minutes"`) {
		t.Errorf("bad value: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// The action reads synth-timeout (once a flag of cdkbot review only): a value that is not a
// duration fails the run before anything is synthesized or posted, naming the input.
func TestActionSynthTimeoutInput(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "opened", "4678020cb068", "9f2c1a0b7d4e"))
	t.Setenv("INPUT_SYNTH-TIMEOUT", "ten minutes")
	code, _, stderr := run(t, "action")
	if code != ExitUsage || !strings.Contains(stderr, "synth-timeout") || !strings.Contains(stderr, "give a duration") {
		t.Errorf("exit %d, want %d naming the input:\n%s", code, ExitUsage, stderr)
	}
	if len(srv.Comments[42]) != 0 || len(srv.CheckRuns) != 0 {
		t.Errorf("posted on a bad input: %d comments, %d check runs", len(srv.Comments[42]), len(srv.CheckRuns))
	}
}
