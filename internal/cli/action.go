package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/action"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

func newActionCommand(streams IO) *cobra.Command {
	cmd := &cobra.Command{
		Use: "action",
		Short: "Run as the GitHub Action: review pull requests and merge queues, deploy merges " +
			"(inputs and event from the Actions environment)",
		Args: exactArgs(0, "no arguments (inputs come from the workflow)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAction(cmd.Context(), streams)
		},
	}
	var reportFile string
	comment := &cobra.Command{
		Use:   "comment --report FILE",
		Short: "Post a saved review as the sticky comment (from a trusted workflow_run job, for pull requests from forks)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runActionComment(cmd.Context(), streams, reportFile)
		},
	}
	comment.Flags().StringVar(&reportFile, "report", "", "the report file a review wrote (output report-file)")
	cmd.AddCommand(comment)
	return cmd
}

// actionRun is what every flow is wired from: the runtime, its inputs and the GitHub client.
type actionRun struct {
	streams IO
	rt      *ghaction.Runtime
	workdir string
}

func runAction(ctx context.Context, streams IO) error {
	if os.Getenv("GITHUB_EVENT_NAME") == "" {
		return failure.Usagef("cdkbot action runs as a step of a GitHub Actions job, which names its event " +
			"(GITHUB_EVENT_NAME is not set here); outside Actions, run cdkbot review or cdkbot deploy")
	}
	rt, err := ghaction.New(os.Getenv, streams.Out)
	if err != nil {
		return failure.Usagef("%v", err)
	}
	owner, repo := rt.Repo()
	streams.debug.Printf("event %s on %s/%s at %s, working directory %q, GitHub API %s",
		rt.EventName(), owner, repo, rt.SHA(), rt.Input("working-directory"), rt.APIURL())
	rt.Mask(rt.Input("github-token"))
	r := &actionRun{streams: streams, rt: rt, workdir: rt.Input("working-directory")}
	if r.workdir == "" {
		r.workdir = "."
	}
	if plan, reports := r.path("fan-in-plan"), r.path("fan-in-reports"); plan != "" || reports != "" {
		in, err := fanInRequest(fanInFlags{plan: plan, reports: reports})
		if err != nil {
			return err
		}
		return postFanIn(ctx, r, in)
	}
	key, err := r.key()
	if err != nil {
		return err
	}
	switch ev := rt.EventName(); ev {
	case "pull_request", "pull_request_review", "pull_request_target":
		pr, ok := rt.PullRequest()
		if !ok {
			return failure.Usagef("the %s event has no pull_request payload: is GITHUB_EVENT_PATH (%q) the "+
				"event file of this run?", ev, os.Getenv("GITHUB_EVENT_PATH"))
		}
		d, gate, cleanup, err := r.reviewDeps(ctx)
		if err != nil {
			return err
		}
		defer cleanup()
		return action.ReviewPullRequest(ctx, d, action.PullRequestReview{
			Event: ev, PR: *pr, CheckedOut: rt.SHA(), Key: key,
			Comment: rt.Input("comment"), Labels: rt.Input("result-labels"), Gate: gate,
		})
	case "issue_comment":
		body, number, ok := rt.IssueComment()
		if !ok {
			rt.Notice("cdkbot: the comment is not on a pull request; nothing to do")
			return nil
		}
		d, gate, cleanup, err := r.reviewDeps(ctx)
		if err != nil {
			return err
		}
		defer cleanup()
		return action.ReviewCommand(ctx, d, body, number,
			action.PullRequestReview{Key: key, Comment: rt.Input("comment"),
				Labels: rt.Input("result-labels"), Gate: gate})
	case "merge_group":
		mg, ok := rt.MergeGroup()
		if !ok {
			return failure.Usagef("the merge_group event has no merge_group payload")
		}
		d, gate, cleanup, err := r.reviewDeps(ctx)
		if err != nil {
			return err
		}
		defer cleanup()
		return action.ReviewMergeGroup(ctx, d, action.MergeGroupReview{
			Action: mg.Action, BaseSHA: mg.BaseSHA, HeadSHA: mg.HeadSHA, HeadRef: mg.HeadRef,
			Key: key, Gate: gate,
		})
	case "push":
		return r.deploy(ctx, key)
	default:
		rt.Notice("cdkbot: nothing to do for the %q event "+
			"(cdkbot reviews pull_request, pull_request_review, pull_request_target and merge_group, "+
			"answers `/cdkbot review` comments, and deploys on push to the default branch)", ev)
		return nil
	}
}

// path resolves an input path against the working directory.
func (r *actionRun) path(name string) string {
	v := r.rt.Input(name)
	if v != "" && !filepath.IsAbs(v) {
		v = filepath.Join(r.workdir, v)
	}
	return v
}

func (r *actionRun) gate() (action.Gate, error) {
	rule, err := action.ParseApprovalRule(r.rt.Input("approval"))
	if err != nil {
		return action.Gate{}, failure.Usagef("%v", err)
	}
	annotate := "cdk.json"
	if root, err := pipeline.OpenHistory(r.workdir, nil); err == nil {
		if abs, err := filepath.Abs(r.workdir); err == nil {
			if rel, err := filepath.Rel(root.Root(), abs); err == nil && !strings.HasPrefix(rel, "..") {
				annotate = filepath.ToSlash(filepath.Join(rel, "cdk.json"))
			}
		}
	}
	return action.Gate{CheckName: r.rt.Input("check-name"), OverrideLabel: r.rt.Input("override-label"), Approval: rule,
		AnnotationPath: annotate, RunURL: r.rt.RunURL(), Run: r.rt.RunID()}, nil
}

func (r *actionRun) github() (*githubapi.Client, error) {
	token := r.rt.Input("github-token")
	if token == "" {
		return nil, failure.Usagef("input github-token is empty; pass ${{ github.token }} or a token that can comment")
	}
	var maxWait time.Duration
	if v := r.rt.Input("rate-limit-wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, failure.Usagef("input rate-limit-wait is %q: give a duration such as 5m or 30s", v)
		}
		if maxWait = d; d == 0 {
			maxWait = time.Nanosecond // 0: never wait, fail at once saying when the limit resets
		}
	}
	owner, repo := r.rt.Repo()
	return githubapi.New(githubapi.Options{
		Token: token, APIURL: r.rt.APIURL(), GraphQLURL: r.rt.GraphQLURL(),
		Owner: owner, Repo: repo, MaxWait: maxWait, HTTP: r.streams.debug.httpClient(),
	})
}

// reviewDeps wires a review: the GitHub client, the reviewer configured from the inputs, and
// git when revisions are synthesized from the checkout. cleanup removes what the reviews wrote.
func (r *actionRun) reviewDeps(ctx context.Context) (_ action.Deps, _ action.Gate, cleanup func(), _ error) {
	cleanup = func() {}
	gate, err := r.gate()
	if err != nil {
		return action.Deps{}, gate, cleanup, err
	}
	gh, err := r.github()
	if err != nil {
		return action.Deps{}, gate, cleanup, err
	}
	opts := pipeline.DefaultReviewOptions()
	opts.BaseAssembly, opts.HeadAssembly, opts.Config = r.path("base-assembly"), r.path("head-assembly"), r.path("config")
	opts.Repo, opts.AssemblyDir, opts.Log = r.workdir, "cdk.out", r.streams.Out
	for _, s := range pipeline.ReviewSettings {
		if v := r.rt.Input(s.Name); v != "" && s.Action {
			if err := s.Set(&opts, v); err != nil {
				return action.Deps{}, gate, cleanup, failure.Usagef("input %s is %q: %v", s.Name, v, err)
			}
		}
	}
	// A pull request's code: synthesized as synth-user (the image's users, else created where
	// cdkbot may), or refused without a sandbox unless synth-user is none.
	opts.PullRequestCode, opts.Host = true, synthHost
	// Named or not, the file is the checkout's (the pull request's): read inside it.
	opts.ConfigRequired, opts.ConfigCheckout = opts.Config != "", r.workdir
	if !opts.ConfigRequired {
		opts.Config = filepath.Join(r.workdir, ".cdkbot.yml")
	}
	rv := &action.ReviewPipeline{Options: opts}
	d := action.Deps{GitHub: gh, Runner: cleanRunner{r.rt}, Reviewer: rv, SaveReport: action.SaveReportIn(runnerTemp())}
	if !rv.UsesAssemblies() {
		h, err := pipeline.OpenHistory(r.workdir, r.streams.Out)
		if err != nil {
			return d, gate, cleanup, err
		}
		d.Git = h
	}
	return d, gate, rv.Cleanup, nil
}

// maxReportFile bounds a fork's report file: what cdkbot writes (a comment within GitHub's
// limit and the review as JSON) is far smaller; a larger file is refused before it is read.
const maxReportFile = 64 << 20

// readReport reads a report file, which is data a fork's author controlled: a regular file, at
// most maxReportFile bytes, measured before reading.
func readReport(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, failure.Usagef("%v", err)
	}
	tooLarge := func(size string) error {
		return failure.Inputf("%s is %s, larger than any report file cdkbot writes (at most %d MiB): "+
			"refused without reading it", path, size, maxReportFile>>20)
	}
	switch {
	case !st.Mode().IsRegular():
		return nil, failure.Inputf("%s is not a regular file (%s): a report file is one", path, st.Mode().Type())
	case st.Size() > maxReportFile:
		return nil, tooLarge(fmt.Sprintf("%d MiB", st.Size()>>20))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, failure.Usagef("%v", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxReportFile+1))
	if err != nil {
		return nil, failure.InputErr(fmt.Errorf("read %s: %w", path, err))
	}
	if len(raw) > maxReportFile { // it grew since it was measured
		return nil, tooLarge("growing")
	}
	return raw, nil
}

// synthHost is the machine the action's reviews choose their sandbox on (nil: this one); tests
// replace it.
var synthHost pipeline.Host

func runActionComment(ctx context.Context, streams IO, path string) error {
	if path == "" {
		return failure.Usagef("--report FILE is required")
	}
	raw, err := readReport(path)
	if err != nil {
		return err
	}
	var r action.SavedReport
	if err := json.Unmarshal(raw, &r); err != nil || r.PullRequest == 0 ||
		!strings.HasPrefix(r.Comment, render.MarkerPrefix) {
		return failure.InputErr(fmt.Errorf("%s is not a cdkbot report file", path))
	}
	rt, err := ghaction.New(os.Getenv, streams.Out)
	if err != nil {
		return failure.Usagef("%v", err)
	}
	rt.Mask(rt.Input("github-token"))
	gh, err := (&actionRun{streams: streams, rt: rt}).github()
	if err != nil {
		return err
	}
	run, ok := rt.WorkflowRun()
	if !ok {
		return failure.Usagef("cdkbot action comment posts a fork's report "+
			"from a job triggered by workflow_run (the event is %q): "+
			"only that event says which pull request and commit the report may be for", rt.EventName())
	}
	return action.PostSavedReport(ctx, action.Deps{GitHub: gh, Runner: cleanRunner{rt}}, r, run)
}

// deploy wires the merge flow: the push, the inputs, and a deployer over `cdkbot deploy`.
func (r *actionRun) deploy(ctx context.Context, key string) error {
	push, ok := r.rt.Push()
	if !ok {
		return failure.Usagef("the push event has no ref")
	}
	if r.rt.Input("deploy") == "false" {
		r.rt.Notice("cdkbot: input deploy is false: nothing deployed")
		return nil
	}
	onUnreviewed := r.rt.Input("on-unreviewed")
	if onUnreviewed == "" {
		onUnreviewed = "warn"
	}
	if onUnreviewed != "warn" && onUnreviewed != "refuse" {
		return failure.Usagef("input on-unreviewed is %q: use warn or refuse", onUnreviewed)
	}
	gate, err := r.gate()
	if err != nil {
		return err
	}
	gh, err := r.github()
	if err != nil {
		return err
	}
	inputs, err := r.deployInputs()
	if err != nil {
		return err
	}
	config := r.path("config")
	if config == "" {
		config = filepath.Join(r.workdir, ".cdkbot.yml")
	}
	dep := &action.DeployPipeline{Revision: push.After, Workdir: r.workdir, AssemblyDir: r.path("assembly"),
		InstallCommand: r.rt.Input("install-command"), SynthCommand: r.rt.Input("synth-command"), Config: config,
		ConfigRequired: r.rt.Input("config") != "", ConfigCheckout: r.workdir, Inputs: inputs, TempDir: runnerTemp(),
		Runner: cleanRunner{r.rt}, Log: r.streams.Out,
		BuildOutput: r.streams.Err,
		View:        func(p *deployplan.Plan) pipeline.DeployView { return newDeployView(r.streams.Err, p, r.rt) }}
	return action.DeployOnMerge(ctx, action.Deps{GitHub: gh, Runner: cleanRunner{r.rt}, Deployer: dep}, action.Merge{
		Branch: push.Branch, DefaultBranch: push.DefaultBranch, After: push.After, Commits: push.Commits,
		Key: key, RunURL: r.rt.RunURL(),
		OnUnreviewed: onUnreviewed, Gate: gate, ShowOutputs: r.rt.Input("show-outputs") == "true",
	})
}

// deployInputs reads the action's deploy inputs.
func (r *actionRun) deployInputs() (action.DeployInputs, error) {
	var in action.DeployInputs
	if st := r.rt.Input("deploy-stacks"); st != "" {
		in.Stacks = pipeline.SplitList(st)
	}
	if w := r.rt.Input("waves"); w != "" {
		in.Waves = pipeline.SplitList(w)
	}
	if c := r.rt.Input("concurrency"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return in, failure.Usagef("input concurrency is %q: give a number of stacks, at least 1", c)
		}
		in.Concurrency = n
	}
	if v := r.rt.Input("deploy-timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return in, failure.Usagef("input deploy-timeout is %q: give a duration such as 30m or 2h", v)
		}
		in.Timeout = d
	}
	switch ra := r.rt.Input("require-approval"); ra {
	case "", "never", "broadening":
		in.RequireApproval = ra
	default:
		return in, failure.Usagef("input require-approval is %q: use never or broadening", ra)
	}
	return in, nil
}

func runnerTemp() string {
	if d := os.Getenv("RUNNER_TEMP"); d != "" {
		return d
	}
	return os.TempDir()
}

// key is this job's comment key: the key input (a hand-written matrix gives each leg its own),
// else workflow/job/working-directory.
func (r *actionRun) key() (string, error) {
	return action.CommentKey(r.rt.Input("key"), r.rt.Key(r.workdir))
}
