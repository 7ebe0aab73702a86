package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/action"
	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/synth"
)

func newActionCommand(streams IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "action",
		Short: "Run as the GitHub Action: review pull requests and merge queues, deploy merges (inputs and event from the Actions environment)",
		Args:  exactArgs(0, "no arguments (inputs come from the workflow)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return actionError(runAction(cmd.Context(), streams))
		},
	}
	var reportFile string
	comment := &cobra.Command{
		Use:   "comment --report FILE",
		Short: "Post a saved review as the sticky comment (from a trusted workflow_run job, for pull requests from forks)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return actionError(runActionComment(cmd.Context(), streams, reportFile))
		},
	}
	comment.Flags().StringVar(&reportFile, "report", "", "the report file a review wrote (output report-file)")
	cmd.AddCommand(comment)
	return cmd
}

// actionError maps the flows' errors to the exit-code table.
func actionError(err error) error {
	var in *action.InputError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, action.ErrBlocked):
		return &verdictError{}
	case errors.As(err, &in):
		return &inputError{err}
	}
	return err
}

// actionRun is what every flow is wired from: the runtime, its inputs and the GitHub client.
type actionRun struct {
	streams IO
	rt      *ghaction.Runtime
	workdir string
}

func runAction(ctx context.Context, streams IO) error {
	rt, err := ghaction.New(os.Getenv, streams.Out)
	if err != nil {
		return usagef("%v", err)
	}
	rt.Mask(rt.Input("github-token"))
	r := &actionRun{streams: streams, rt: rt, workdir: rt.Input("working-directory")}
	if r.workdir == "" {
		r.workdir = "."
	}
	switch ev := rt.EventName(); ev {
	case "pull_request", "pull_request_review", "pull_request_target":
		pr, ok := rt.PullRequest()
		if !ok {
			return usagef("the %s event has no pull_request payload", ev)
		}
		d, gate, cleanup, err := r.reviewDeps(ctx)
		if err != nil {
			return err
		}
		defer cleanup()
		return action.ReviewPullRequest(ctx, d, action.PullRequestReview{Event: ev, CheckedOut: rt.SHA(), Key: rt.Key(r.workdir),
			Comment: rt.Input("comment"), Gate: gate, PR: action.PullRequest{Number: pr.Number, Author: pr.Author, HeadSHA: pr.HeadSHA,
				BaseSHA: pr.BaseSHA, MergeCommitSHA: pr.MergeCommitSHA, Labels: pr.Labels, Fork: pr.Fork}})
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
		return action.ReviewCommand(ctx, d, body, number, action.PullRequestReview{Key: rt.Key(r.workdir), Comment: rt.Input("comment"), Gate: gate})
	case "merge_group":
		mg, ok := rt.MergeGroup()
		if !ok {
			return usagef("the merge_group event has no merge_group payload")
		}
		d, gate, cleanup, err := r.reviewDeps(ctx)
		if err != nil {
			return err
		}
		defer cleanup()
		return action.ReviewMergeGroup(ctx, d, action.MergeGroupReview{Action: mg.Action, BaseSHA: mg.BaseSHA, HeadSHA: mg.HeadSHA,
			HeadRef: mg.HeadRef, Key: rt.Key(r.workdir), Gate: gate})
	case "push":
		return r.deploy(ctx)
	default:
		rt.Notice("cdkbot: nothing to do for the %q event (cdkbot reviews pull_request, pull_request_review, pull_request_target and merge_group, "+
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
		return action.Gate{}, usagef("%v", err)
	}
	annotate := "cdk.json"
	if root, err := gitrepo.Open(r.workdir); err == nil {
		if abs, err := filepath.Abs(r.workdir); err == nil {
			if rel, err := filepath.Rel(root.Root(), abs); err == nil && !strings.HasPrefix(rel, "..") {
				annotate = filepath.ToSlash(filepath.Join(rel, "cdk.json"))
			}
		}
	}
	return action.Gate{CheckName: r.rt.Input("check-name"), OverrideLabel: r.rt.Input("override-label"), Approval: rule,
		AnnotationPath: annotate, RunURL: r.rt.RunURL()}, nil
}

func (r *actionRun) github() (*githubapi.Client, error) {
	token := r.rt.Input("github-token")
	if token == "" {
		return nil, usagef("input github-token is empty; pass ${{ github.token }} or a token that can comment")
	}
	var maxWait time.Duration
	if v := r.rt.Input("rate-limit-wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, usagef("input rate-limit-wait is %q: give a duration such as 5m or 30s", v)
		}
		if maxWait = d; d == 0 {
			maxWait = time.Nanosecond // 0: never wait, fail at once saying when the limit resets
		}
	}
	owner, repo := r.rt.Repo()
	return githubapi.New(githubapi.Options{Token: token, APIURL: r.rt.APIURL(), GraphQLURL: r.rt.GraphQLURL(), Owner: owner, Repo: repo, MaxWait: maxWait})
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
	opts := reviewOptions{BaseAssembly: r.path("base-assembly"), HeadAssembly: r.path("head-assembly"), Config: r.path("config"), Repo: r.workdir,
		OverrideLabel: r.rt.Input("override-label"), FailOn: review.DefaultFailOn, AssemblyDir: "cdk.out",
		InstallCommand: r.rt.Input("install-command"), SynthCommand: r.rt.Input("synth-command"), Log: r.streams.Out,
		BaseFailure: r.rt.Input("base-failure"), SecuritySeverity: r.rt.Input("security-severity"), SynthUser: r.rt.Input("synth-user"),
		Deployed: r.rt.Input("deployed")}
	configGiven := opts.Config != ""
	if !configGiven {
		opts.Config = filepath.Join(r.workdir, ".cdkbot.yml")
	}
	if opts.OverrideLabel == "" {
		opts.OverrideLabel = review.DefaultOverrideLabel
	}
	if st := r.rt.Input("stacks"); st != "" {
		opts.Stacks = splitList(st)
	}
	if f := r.rt.Input("fail-on"); f != "" {
		opts.FailOn = splitList(f)
	}
	if in := r.rt.Input("synth-inputs"); in != "" {
		opts.SynthInputs = splitList(strings.ReplaceAll(in, "\n", ","))
	}
	opts.SynthConcurrency = 2
	if c := r.rt.Input("synth-concurrency"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return action.Deps{}, gate, cleanup, usagef("input synth-concurrency is %q: give a whole number, 1 or more (2 synthesizes base and head side by side)", c)
		}
		opts.SynthConcurrency = n
	}
	rv := &actionReviewer{opts: opts, configGiven: configGiven}
	d := action.Deps{GitHub: gh, Runner: r.rt, Reviewer: rv, SaveReport: saveReport}
	if !rv.UsesAssemblies() {
		repo, err := gitrepo.Open(r.workdir)
		if err != nil {
			return d, gate, cleanup, usagef("%v", err)
		}
		d.Git = &gitHistory{repo: repo, log: r.streams.Out}
	}
	return d, gate, rv.cleanup, nil
}

// splitList splits a comma-separated input, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(strings.ReplaceAll(s, " ", ""), ",") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// actionReviewer is the reviewer the flows drive: `cdkbot review` configured from the inputs.
type actionReviewer struct {
	opts        reviewOptions
	configGiven bool
	cleanups    []func()
}

func (a *actionReviewer) UsesAssemblies() bool { return a.opts.HeadAssembly != "" }

func (a *actionReviewer) Review(ctx context.Context, req action.ReviewRequest) (*review.Report, error) {
	o := a.opts
	o.Ctx = ctx
	o.Key, o.HeadSHA, o.MergeSHA, o.Approvals, o.Notes = req.Key, req.HeadSHA, req.MergeSHA, req.Approvals, req.Notes
	if a.UsesAssemblies() {
		o.BaseSHA = req.Base
	} else {
		o.Base, o.Head, o.NoSynth = req.Base, req.Head, req.NoSynth
	}
	if req.NoDeployed {
		o.Deployed = deployedOff // never with pull_request_target's token, never for a fork
	}
	rep, cleanup, err := buildReview(o, a.configGiven, true)
	a.cleanups = append(a.cleanups, cleanup)
	return rep, err
}

func (a *actionReviewer) cleanup() {
	for _, c := range a.cleanups {
		c()
	}
}

// gitHistory answers the flows' questions about history, fetching what a shallow clone lacks.
type gitHistory struct {
	repo *gitrepo.Repo
	log  io.Writer
}

func (g *gitHistory) Parents(rev string) (string, []string, error) { return g.repo.Parents(rev) }

func (g *gitHistory) MergeBase(a, b string) (string, error) {
	mb, err := g.repo.MergeBase(a, b)
	if err != nil && g.repo.Shallow() {
		fmt.Fprintf(g.log, "cdkbot: the merge base of %s and %s is not in this shallow clone; fetching history\n", shortRev(a), shortRev(b))
		if derr := g.repo.Deepen(); derr != nil {
			return "", derr
		}
		return g.repo.MergeBase(a, b)
	}
	return mb, err
}

func saveReport(r action.SavedReport) (string, error) {
	path := filepath.Join(runnerTemp(), "cdkbot-report.json")
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", &operationError{err}
	}
	return path, nil
}

func runActionComment(ctx context.Context, streams IO, path string) error {
	if path == "" {
		return usagef("--report FILE is required")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return usagef("%v", err)
	}
	var r action.SavedReport
	if err := json.Unmarshal(raw, &r); err != nil || r.PullRequest == 0 || !strings.HasPrefix(r.Comment, render.MarkerPrefix) {
		return &inputError{fmt.Errorf("%s is not a cdkbot report file", path)}
	}
	rt, err := ghaction.New(os.Getenv, streams.Out)
	if err != nil {
		return usagef("%v", err)
	}
	rt.Mask(rt.Input("github-token"))
	gh, err := (&actionRun{streams: streams, rt: rt}).github()
	if err != nil {
		return err
	}
	run, ok := rt.WorkflowRun()
	if !ok {
		return usagef("cdkbot action comment posts a fork's report from a job triggered by workflow_run (the event is %q): "+
			"only that event says which pull request and commit the report may be for", rt.EventName())
	}
	return action.PostSavedReport(ctx, action.Deps{GitHub: gh, Runner: rt}, r, run)
}

// deploy wires the merge flow: the push, the inputs, and a deployer over `cdkbot deploy`.
func (r *actionRun) deploy(ctx context.Context) error {
	push, ok := r.rt.Push()
	if !ok {
		return usagef("the push event has no ref")
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
		return usagef("input on-unreviewed is %q: use warn or refuse", onUnreviewed)
	}
	gate, err := r.gate()
	if err != nil {
		return err
	}
	gh, err := r.github()
	if err != nil {
		return err
	}
	dep := &actionDeployer{run: r, revision: push.After}
	if err := dep.parseInputs(); err != nil {
		return err
	}
	return action.DeployOnMerge(ctx, action.Deps{GitHub: gh, Runner: r.rt, Deployer: dep}, action.Merge{Branch: push.Branch,
		DefaultBranch: push.DefaultBranch, After: push.After, Commits: push.Commits, Key: r.rt.Key(r.workdir), RunURL: r.rt.RunURL(),
		OnUnreviewed: onUnreviewed, Gate: gate, ShowOutputs: r.rt.Input("show-outputs") == "true"})
}

// actionDeployer is `cdkbot deploy` configured from the inputs and the configuration file.
type actionDeployer struct {
	run      *actionRun
	revision string
	dir      string // the assembly deployed
	o        deployOptions
	inputs   struct {
		stacks, waves   []string
		concurrency     int
		requireApproval string
	}
	settled bool
}

func (d *actionDeployer) parseInputs() error {
	rt := d.run.rt
	if st := rt.Input("deploy-stacks"); st != "" {
		d.inputs.stacks = splitList(st)
	}
	if w := rt.Input("waves"); w != "" {
		d.inputs.waves = splitList(w)
	}
	if c := rt.Input("concurrency"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return usagef("input concurrency is %q: give a number of stacks, at least 1", c)
		}
		d.inputs.concurrency = n
	}
	switch ra := rt.Input("require-approval"); ra {
	case "", "never", "broadening":
		d.inputs.requireApproval = ra
	default:
		return usagef("input require-approval is %q: use never or broadening", ra)
	}
	return nil
}

func (d *actionDeployer) Assembly(ctx context.Context) (*assembly.Assembly, error) {
	dir := d.run.path("assembly")
	if dir == "" {
		// The merged commit is trusted (it passed review and merge): synthesize the checkout.
		dir = filepath.Join(runnerTemp(), "cdkbot-deploy.out")
		d.run.rt.Group("cdkbot: synthesizing " + shortRev(d.revision))
		err := synth.Run(ctx, synth.Options{Dir: d.run.workdir, OutDir: dir, InstallCommand: d.run.rt.Input("install-command"),
			SynthCommand: d.run.rt.Input("synth-command"), Env: os.Environ(), Log: d.run.streams.Out})
		d.run.rt.EndGroup()
		if err != nil {
			return nil, &inputError{err}
		}
	}
	d.dir = dir
	return loadAssembly(dir)
}

// RequireApproval settles the deploy options from the configuration file (its deploy section and
// its policy) and the inputs: inputs win over the file, which wins over the defaults.
func (d *actionDeployer) RequireApproval() (string, error) {
	if d.settled {
		return d.o.RequireApproval, nil
	}
	config := d.run.path("config")
	if config == "" {
		config = filepath.Join(d.run.workdir, ".cdkbot.yml")
	}
	set, policy, err := deploySettings(config, d.run.rt.Input("config") != "")
	if err != nil {
		return "", err
	}
	o := deployOptions{Revision: d.revision, Concurrency: 4, Waves: DefaultWaves, RequireApproval: "never",
		OutputsFile: filepath.Join(runnerTemp(), "cdkbot-outputs.json"), Policy: policy}
	if len(set.Waves) > 0 {
		o.Waves = set.Waves
	}
	if set.Concurrency > 0 {
		o.Concurrency = set.Concurrency
	}
	if set.RequireApproval != "" {
		o.RequireApproval = set.RequireApproval
	}
	o.Stacks = d.inputs.stacks
	if len(d.inputs.waves) > 0 {
		o.Waves = d.inputs.waves
	}
	if d.inputs.concurrency > 0 {
		o.Concurrency = d.inputs.concurrency
	}
	if d.inputs.requireApproval != "" {
		o.RequireApproval = d.inputs.requireApproval
	}
	d.o, d.settled = o, true
	return o.RequireApproval, nil
}

// Policy is the merged commit's configuration's aspects, the ones its review applied.
func (d *actionDeployer) Policy() (*aspects.Config, error) {
	if _, err := d.RequireApproval(); err != nil {
		return nil, err
	}
	return d.o.Policy, nil
}

func (d *actionDeployer) Deploy(ctx context.Context, a *assembly.Assembly, approved bool, onPlan func(*deployplan.Plan)) (*render.DeployReport, error) {
	if _, err := d.RequireApproval(); err != nil {
		return nil, err
	}
	o := d.o
	o.Dir = d.dir
	if approved {
		o.RequireApproval = "never"
	}
	o.OnPlan = onPlan
	rep, err := deployAssembly(ctx, d.run.streams, a, o, d.run.rt)
	d.run.rt.Output("outputs-file", o.OutputsFile)
	return rep, err
}

func runnerTemp() string {
	if d := os.Getenv("RUNNER_TEMP"); d != "" {
		return d
	}
	return os.TempDir()
}

func shortRev(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}
