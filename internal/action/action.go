// Package action holds cdkbot's GitHub flows: the pull-request review (sticky comment, check
// run, job summary), the merge-queue gate, the `/cdkbot review` command, posting a fork's saved
// review, and the deploy of merged pull requests. Each flow takes a parsed event and the small
// interfaces it declares here (GitHub's comments, checks, pull requests, deployments and issues;
// a reviewer; a deployer; git; the Actions runtime), and returns what happened, so it is tested
// with fakes and without environment variables. internal/cli parses inputs and wires adapters.
//
// The package is named for what it serves, the GitHub Action; "flows" would say how it is
// built, not what for.
package action

import (
	"context"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/review"
)

// Runner is the Actions runtime the flows report through: step outputs, the job summary,
// annotations and log groups.
type Runner interface {
	Output(key, value string)
	Summary(markdown string)
	Notice(format string, args ...any)
	Warning(format string, args ...any)
	Error(format string, args ...any)
	Group(title string)
	EndGroup()
}

// Comments keeps cdkbot's comments on issues and pull requests.
type Comments interface {
	UpsertComment(ctx context.Context, number int, body string, ours func(body string) bool) (githubapi.Result, error)
	OwnCommentBodies(ctx context.Context, number int, ours func(body string) bool) ([]string, error)
	OwnCommentsWithEditors(ctx context.Context, number int, ours func(body string) bool) ([]githubapi.OwnComment, error)
	LatestOwnComment(ctx context.Context, number int, ours func(body string) bool) (githubapi.Comment, bool, error)
}

// CommentRemover deletes cdkbot's comments on a pull request that no longer has anything to say
// (comment: changes).
type CommentRemover interface {
	DeleteOwnComments(ctx context.Context, number int, ours func(body string) bool) (int, error)
}

// Labels sets and clears labels on issues and pull requests (result-labels).
type Labels interface {
	AddLabels(ctx context.Context, number int, labels []string) error
	RemoveLabel(ctx context.Context, number int, label string) error
}

// Checks reports a verdict as a check run.
type Checks interface {
	CompleteCheckRun(ctx context.Context, run githubapi.CheckRun) (string, error)
}

// PullRequests reads pull requests and who approved them.
type PullRequests interface {
	PullRequest(ctx context.Context, number int) (*githubapi.PullRequest, error)
	LabelEvents(ctx context.Context, number int) ([]githubapi.LabelEvent, error)
	Reviews(ctx context.Context, number int) ([]githubapi.Review, error)
	Permission(ctx context.Context, login string) (string, error)
	MergedPullRequests(ctx context.Context, base string, shas []string) ([]githubapi.MergedPullRequest, error)
	OpenPullRequestsFor(ctx context.Context, owner, branch string) ([]githubapi.PullRequest, error)
}

// Deployments records deployments in GitHub's Deployments API.
type Deployments interface {
	CreateDeployment(ctx context.Context, ref, environment, description string) (int64, error)
	SetDeploymentStatus(ctx context.Context, id int64, state, logURL, description string) error
}

// Issues keeps the one issue a failing deploy opens.
type Issues interface {
	ReportIssue(ctx context.Context, label, title, body string) (githubapi.Result, error)
}

// GitHub is everything the flows ask of GitHub.
type GitHub interface {
	Comments
	CommentRemover
	Labels
	Checks
	PullRequests
	Deployments
	Issues
}

var _ GitHub = (*githubapi.Client)(nil)

// Git answers questions about the checkout's history.
type Git interface {
	// Parents resolves rev and returns it with its parents, first parent first.
	Parents(rev string) (string, []string, error)
	// MergeBase is the best common ancestor of two commits.
	MergeBase(a, b string) (string, error)
}

// ReviewRequest says what to review: two commits of the checkout, or the assemblies the
// reviewer was configured with, and what the review must record.
type ReviewRequest struct {
	Base, Head string // commits; the reviewer reads or synthesizes each revision's assembly
	// NoSynth forbids running the app (pull_request_target runs with a write token).
	NoSynth bool
	// NoDeployed forbids asking AWS what runs: under pull_request_target, and for a fork's pull
	// request, whatever credentials the job holds are not the pull request's to use.
	NoDeployed bool
	Key        string
	HeadSHA    string // the pull request's head commit, recorded for the deploy to compare
	MergeSHA   string // the test merge commit reviewed, when it is
	Approvals  []review.Approval
	Notes      []string
}

// Reviewer runs a review: git, synthesis, the assemblies and the review use case behind it.
type Reviewer interface {
	Review(ctx context.Context, req ReviewRequest) (*review.Report, error)
	// UsesAssemblies is true when the reviewer was given pre-synthesized assemblies, so the
	// revisions only label the review.
	UsesAssemblies() bool
}

// Deployer publishes and deploys the merged commit.
type Deployer interface {
	// Assembly is what to deploy: the given assembly, or the checkout synthesized.
	Assembly(ctx context.Context) (*assembly.Assembly, error)
	// RequireApproval is "never" or "broadening", from the inputs and the configuration file.
	RequireApproval() (string, error)
	// Policy is the configuration file's aspects: where they mutate a template, the mutated
	// template is what the review hashed and what deploys.
	Policy() (*aspects.Config, error)
	// Deploy publishes and deploys a as req says. The report is there whenever anything was
	// attempted, also with the error.
	Deploy(ctx context.Context, a *assembly.Assembly, req DeployRequest) (*deployplan.Report, error)
}

// DeployRequest is what the merge flow asks the deployer for, once it compared the merge with
// its reviews.
type DeployRequest struct {
	// Templates are the exact bytes of every stack (policy applied), by qualified id: what the
	// flow compared with the reviews deploys, whatever the assembly's files say afterwards.
	Templates map[string][]byte
	// Running are what each stack must run before it deploys: the base its review compared with.
	Running map[string]deployplan.Expectation
	// Approved lifts require-approval.
	Approved bool
	// OnPlan hears the plan before anything is published or deployed.
	OnPlan func(*deployplan.Plan)
}

// ErrBlocked is a negative verdict the flow has already explained (a failing gate, a refused
// deploy): the job fails without more words.
var ErrBlocked = failure.Blocked
