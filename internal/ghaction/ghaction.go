// Package ghaction is cdkbot's glue to the GitHub Actions runtime (go-githubactions): inputs,
// the event payload, outputs, the job summary, masking and annotations. The environment and the
// output stream are injected, so the action runs in tests exactly as on a runner.
package ghaction

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/cdkbot/cdkbot/internal/pullrequest"
)

// Runtime is one action run.
type Runtime struct {
	a   *githubactions.Action
	ctx *githubactions.GitHubContext
	pr  *pullrequest.Facts
}

// New reads the runtime from the environment.
func New(getenv func(string) string, out io.Writer) (*Runtime, error) {
	a := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(out))
	ctx, err := a.Context()
	if err != nil {
		return nil, fmt.Errorf("read the GitHub Actions context: %w", err)
	}
	return &Runtime{a: a, ctx: ctx}, nil
}

// EventName is the triggering event (pull_request, push, …).
func (r *Runtime) EventName() string { return r.ctx.EventName }

// Repo is the repository's owner and name.
func (r *Runtime) Repo() (string, string) { return r.ctx.Repo() }

// APIURL and GraphQLURL honour GitHub Enterprise.
func (r *Runtime) APIURL() string     { return r.ctx.APIURL }
func (r *Runtime) GraphQLURL() string { return r.ctx.GraphqlURL }

// Key identifies this job's comment: workflow, job and working directory.
func (r *Runtime) Key(workdir string) string {
	return strings.Join([]string{r.ctx.Workflow, r.ctx.Job, workdir}, "/")
}

// RunURL links to this workflow run.
func (r *Runtime) RunURL() string {
	return fmt.Sprintf("%s/%s/actions/runs/%d", r.ctx.ServerURL, r.ctx.Repository, r.ctx.RunID)
}

// RunID names this attempt of this workflow run: GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT as
// "<id>.<attempt>" ("5678.2"). A re-run keeps the id and counts the attempt up, so no two
// attempts share it. It is "" outside Actions, and the id alone when the attempt is unknown.
func (r *Runtime) RunID() string {
	switch {
	case r.ctx.RunID <= 0:
		return ""
	case r.ctx.RunAttempt <= 0:
		return strconv.FormatInt(r.ctx.RunID, 10)
	}
	return fmt.Sprintf("%d.%d", r.ctx.RunID, r.ctx.RunAttempt)
}

// SHA is GITHUB_SHA: on pull_request, GitHub's test merge commit of the pull request
// (refs/pull/N/merge), which actions/checkout checks out; on push, the pushed commit.
func (r *Runtime) SHA() string { return r.ctx.SHA }

// Input returns an action input (trimmed).
func (r *Runtime) Input(name string) string { return strings.TrimSpace(r.a.GetInput(name)) }

// Mask hides a value in every later log line.
func (r *Runtime) Mask(secret string) {
	if secret != "" {
		r.a.AddMask(secret)
	}
}

// Output sets a step output.
func (r *Runtime) Output(k, v string) { r.a.SetOutput(k, v) }

// Summary appends Markdown to the job summary.
func (r *Runtime) Summary(md string) { r.a.AddStepSummary(md) }

// Notice, Warning and Error write annotations.
func (r *Runtime) Notice(format string, args ...any)  { r.a.Noticef(format, args...) }
func (r *Runtime) Warning(format string, args ...any) { r.a.Warningf(format, args...) }
func (r *Runtime) Error(format string, args ...any)   { r.a.Errorf(format, args...) }

// Group folds the lines logged until EndGroup.
func (r *Runtime) Group(title string) { r.a.Group(title) }
func (r *Runtime) EndGroup()          { r.a.EndGroup() }

// SetPullRequest is for events that name a pull request without carrying it (issue_comment):
// the caller reads it from the API.
func (r *Runtime) SetPullRequest(pr *pullrequest.Facts) { r.pr = pr }

// PullRequest reads the pull request of a pull_request or pull_request_target event.
func (r *Runtime) PullRequest() (*pullrequest.Facts, bool) {
	if r.pr != nil {
		return r.pr, true
	}
	pr, ok := r.ctx.Event["pull_request"].(map[string]any)
	if !ok {
		return nil, false
	}
	out := &pullrequest.Facts{
		Number: int(num(pr["number"])), Author: str(dig(pr, "user", "login")),
		HeadSHA: str(dig(pr, "head", "sha")), BaseSHA: str(dig(pr, "base", "sha")),
		MergeCommitSHA: str(pr["merge_commit_sha"]),
	}
	for _, l := range list(pr["labels"]) {
		if m, ok := l.(map[string]any); ok {
			out.Labels = append(out.Labels, str(m["name"]))
		}
	}
	headRepo, baseRepo := str(dig(pr, "head", "repo", "full_name")), str(dig(pr, "base", "repo", "full_name"))
	out.Fork = headRepo != baseRepo || dig(pr, "head", "repo", "fork") == true
	return out, true
}

// MergeGroup is a merge queue's group of changes waiting to merge (merge_group event).
type MergeGroup struct {
	Action           string // checks_requested, destroyed
	HeadSHA, BaseSHA string
	HeadRef, BaseRef string // refs/heads/gh-readonly-queue/main/pr-104-<sha>, refs/heads/main
}

// MergeGroup reads a merge_group event.
func (r *Runtime) MergeGroup() (MergeGroup, bool) {
	mg, ok := r.ctx.Event["merge_group"].(map[string]any)
	if !ok {
		return MergeGroup{}, false
	}
	return MergeGroup{Action: str(r.ctx.Event["action"]), HeadSHA: str(mg["head_sha"]), BaseSHA: str(mg["base_sha"]),
		HeadRef: str(mg["head_ref"]), BaseRef: str(mg["base_ref"])}, true
}

// WorkflowRun is the run a workflow_run event reports (the two-workflow pattern for forks).
type WorkflowRun struct {
	Event      string // what triggered that run: pull_request, …
	HeadSHA    string
	HeadBranch string
	HeadOwner  string // the head repository's owner (the fork)
	// PullRequests GitHub associates with the run (empty for pull requests from forks).
	PullRequests []RunPullRequest
}

// RunPullRequest is a pull request a workflow run belongs to.
type RunPullRequest struct {
	Number  int
	HeadSHA string
}

// WorkflowRun reads a workflow_run event.
func (r *Runtime) WorkflowRun() (WorkflowRun, bool) {
	wr, ok := r.ctx.Event["workflow_run"].(map[string]any)
	if !ok {
		return WorkflowRun{}, false
	}
	out := WorkflowRun{Event: str(wr["event"]), HeadSHA: str(wr["head_sha"]), HeadBranch: str(wr["head_branch"]),
		HeadOwner: str(dig(wr, "head_repository", "owner", "login"))}
	for _, p := range list(wr["pull_requests"]) {
		if m, ok := p.(map[string]any); ok {
			out.PullRequests = append(out.PullRequests, RunPullRequest{
				Number: int(num(m["number"])), HeadSHA: str(dig(m, "head", "sha")),
			})
		}
	}
	return out, true
}

// IssueComment returns the comment body and pull request number of an issue_comment event on
// a pull request.
func (r *Runtime) IssueComment() (body string, number int, ok bool) {
	issue, _ := r.ctx.Event["issue"].(map[string]any)
	if issue == nil || issue["pull_request"] == nil {
		return "", 0, false
	}
	return str(dig(r.ctx.Event, "comment", "body")), int(num(issue["number"])), true
}

func dig(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// Push is what a deploy needs from a push event.
type Push struct {
	Branch        string // the pushed branch ("" for tags)
	DefaultBranch string
	After         string   // the commit the branch now points at
	Commits       []string // the pushed commits' shas, oldest first (GitHub lists up to 20)
}

// Push reads a push event.
func (r *Runtime) Push() (Push, bool) {
	ref, ok := r.ctx.Event["ref"].(string)
	if !ok {
		return Push{}, false
	}
	p := Push{DefaultBranch: str(dig(r.ctx.Event, "repository", "default_branch")), After: str(r.ctx.Event["after"])}
	p.Branch, _ = strings.CutPrefix(ref, "refs/heads/")
	if p.Branch == ref {
		p.Branch = ""
	}
	for _, c := range list(r.ctx.Event["commits"]) {
		if m, ok := c.(map[string]any); ok && str(m["id"]) != "" {
			p.Commits = append(p.Commits, str(m["id"]))
		}
	}
	if p.After != "" && !slices.Contains(p.Commits, p.After) {
		p.Commits = append(p.Commits, p.After)
	}
	return p, true
}
