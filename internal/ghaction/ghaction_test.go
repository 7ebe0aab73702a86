package ghaction

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/ghspec"
)

// runtimeFor reads a real payload (@octokit/webhooks-examples) as the runner would give it.
func runtimeFor(t *testing.T, event string, payload []byte) *Runtime {
	t.Helper()
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": path, "GITHUB_REPOSITORY": "octo-org/octo-repo", "GITHUB_SHA": "m3rge"}
	rt, err := New(func(k string) string { return env[k] }, os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func example(t *testing.T, event, action string) []byte {
	for _, h := range ghspec.Webhooks(t, event) {
		if h.Action == action || action == "" {
			return h.Payload
		}
	}
	t.Fatalf("no %s %s example", event, action)
	return nil
}

func TestRealPullRequestPayloads(t *testing.T) {
	for _, action := range []string{"opened", "synchronize", "labeled"} {
		raw := example(t, "pull_request", action)
		var want struct {
			PullRequest struct {
				Number int `json:"number"`
				User   struct{ Login string }
				Head   struct{ SHA string }
				Base   struct{ SHA string }
				Labels []struct{ Name string }
			} `json:"pull_request"`
		}
		json.Unmarshal(raw, &want)
		for _, event := range []string{"pull_request", "pull_request_target"} {
			pr, ok := runtimeFor(t, event, raw).PullRequest()
			if !ok || pr.Number != want.PullRequest.Number || pr.Number == 0 || pr.Author != want.PullRequest.User.Login || pr.HeadSHA != want.PullRequest.Head.SHA ||
				pr.BaseSHA != want.PullRequest.Base.SHA || len(pr.Labels) != len(want.PullRequest.Labels) || pr.Fork {
				t.Errorf("%s %s: %+v", event, action, pr)
			}
		}
	}
	// The same payload from a fork.
	var p map[string]any
	json.Unmarshal(example(t, "pull_request", "opened"), &p)
	head := p["pull_request"].(map[string]any)["head"].(map[string]any)
	head["repo"].(map[string]any)["full_name"], head["repo"].(map[string]any)["fork"] = "mallory/octo-repo", true
	raw, _ := json.Marshal(p)
	if pr, ok := runtimeFor(t, "pull_request", raw).PullRequest(); !ok || !pr.Fork {
		t.Errorf("fork: %+v", pr)
	}
}

func TestRealPushMergeGroupAndCommentPayloads(t *testing.T) {
	for _, h := range ghspec.Webhooks(t, "push") {
		var p struct {
			Ref, After string
			Commits    []any
		}
		json.Unmarshal(h.Payload, &p)
		rt := runtimeFor(t, "push", h.Payload)
		push, ok := rt.Push()
		tag := strings.HasPrefix(p.Ref, "refs/tags/")
		// A tag push names no branch (nothing deploys); a branch push its branch and commits.
		if !ok || (push.Branch == "") != tag || push.DefaultBranch != "master" || push.After != p.After || len(push.Commits) < len(p.Commits) ||
			push.Commits[len(push.Commits)-1] != push.After || rt.SHA() != "m3rge" {
			t.Errorf("push %s: %+v", p.Ref, push)
		}
	}
	mg, ok := runtimeFor(t, "merge_group", example(t, "merge_group", "checks_requested")).MergeGroup()
	if !ok || mg.Action != "checks_requested" || mg.HeadSHA != "2ffea6db159f6b6c47a24e778fb9ef40cf6b1c7d" ||
		mg.BaseSHA != "380387fbc80638b734a49e1be1c4dfec1c01b33c" || mg.BaseRef != "refs/heads/main" {
		t.Errorf("merge_group: %+v", mg)
	}
	// Comments on issues are no review command; on pull requests they are.
	for _, h := range ghspec.Webhooks(t, "issue_comment") {
		var p struct {
			Issue struct {
				Number      int `json:"number"`
				PullRequest any `json:"pull_request"`
			} `json:"issue"`
		}
		json.Unmarshal(h.Payload, &p)
		body, number, ok := runtimeFor(t, "issue_comment", h.Payload).IssueComment()
		if ok != (p.Issue.PullRequest != nil) || (ok && (number != p.Issue.Number || body == "")) {
			t.Errorf("issue_comment %s: %q %d %v", h.Action, body, number, ok)
		}
	}
}
