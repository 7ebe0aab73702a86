package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/synth"
)

// FailureLabel marks the one issue a failing deploy on the default branch keeps open.
const FailureLabel = "cdkbot-deploy-failed"

// deployOnMerge is the action on a push to the default branch: find the pull requests the push
// merged, compare what is about to deploy with what their reviews showed, publish and deploy,
// then report on each pull request, in the Deployments API, in the job summary and outputs,
// and in one issue when the deploy failed.
func deployOnMerge(ctx context.Context, streams IO, rt *ghaction.Runtime) error {
	push, ok := rt.Push()
	if !ok {
		return usagef("the push event has no ref")
	}
	switch {
	case push.Branch == "" || push.Branch != push.DefaultBranch:
		rt.Notice("cdkbot: push to %q, not the default branch %q: nothing to deploy", push.Branch, push.DefaultBranch)
		return nil
	case rt.Input("deploy") == "false":
		rt.Notice("cdkbot: input deploy is false: nothing deployed")
		return nil
	}
	onUnreviewed := rt.Input("on-unreviewed")
	if onUnreviewed == "" {
		onUnreviewed = "warn"
	}
	if onUnreviewed != "warn" && onUnreviewed != "refuse" {
		return usagef("input on-unreviewed is %q: use warn or refuse", onUnreviewed)
	}
	workdir := rt.Input("working-directory")
	if workdir == "" {
		workdir = "."
	}
	client, err := newGitHub(rt)
	if err != nil {
		return err
	}
	gh := &mergeReporter{rt: rt, client: client}
	prs := gh.mergedPullRequests(ctx, push)

	rep := &render.DeployReport{Key: "deploy/" + rt.Key(workdir), Revision: push.After, RunURL: rt.RunURL()}
	// Whatever stops the deploy before it starts is reported like a failed deploy: on the pull
	// requests and in the failure issue, not only in the log.
	stopped := func(err error) error {
		rep.Refused = "nothing deployed: " + err.Error()
		rt.Error("cdkbot: %s", rep.Refused)
		gh.finish(ctx, rep, prs, push, true)
		return err
	}
	dir := rt.Input("assembly")
	if dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join(workdir, dir)
	}
	if dir == "" {
		// The merged commit is trusted (it passed review and merge): synthesize the checkout.
		dir = filepath.Join(runnerTemp(), "cdkbot-deploy.out")
		rt.Group("cdkbot: synthesizing " + shortRev(push.After))
		err := synth.Run(ctx, synth.Options{Dir: workdir, OutDir: dir, InstallCommand: rt.Input("install-command"),
			SynthCommand: rt.Input("synth-command"), Env: os.Environ(), Log: streams.Out})
		rt.EndGroup()
		if err != nil {
			return stopped(&inputError{err})
		}
	}
	a, err := loadAssembly(dir)
	if err != nil {
		return stopped(err)
	}
	if rep.Unreviewed, err = gh.unreviewed(ctx, a, prs, push.After); err != nil {
		return err
	}
	for _, u := range rep.Unreviewed {
		rt.Warning("cdkbot: not as reviewed: %s", u)
	}
	if len(rep.Unreviewed) > 0 && onUnreviewed == "refuse" {
		rep.Refused = fmt.Sprintf("on-unreviewed is refuse: nothing deployed, because %d item(s) differ from what reviewers saw. "+
			"Review them in a pull request, or deploy with on-unreviewed: warn.", len(rep.Unreviewed))
		rt.Error("cdkbot: %s", rep.Refused)
		gh.finish(ctx, rep, prs, push, true)
		return &verdictError{}
	}

	config := rt.Input("config")
	switch {
	case config == "":
		config = filepath.Join(workdir, ".cdkbot.yml")
	case !filepath.IsAbs(config):
		config = filepath.Join(workdir, config)
	}
	set, err := deploySettings(config, rt.Input("config") != "")
	if err != nil {
		return stopped(err)
	}
	o := deployOptions{Dir: dir, Revision: push.After, Concurrency: 4, Waves: DefaultWaves, RequireApproval: "never",
		OutputsFile: filepath.Join(runnerTemp(), "cdkbot-outputs.json")}
	// Inputs win over the configuration file's deploy section, which wins over the defaults.
	if len(set.Waves) > 0 {
		o.Waves = set.Waves
	}
	if set.Concurrency > 0 {
		o.Concurrency = set.Concurrency
	}
	if set.RequireApproval != "" {
		o.RequireApproval = set.RequireApproval
	}
	if st := rt.Input("deploy-stacks"); st != "" {
		o.Stacks = strings.Split(strings.ReplaceAll(st, " ", ""), ",")
	}
	if w := rt.Input("waves"); w != "" {
		o.Waves = strings.Split(strings.ReplaceAll(w, " ", ""), ",")
	}
	if c := rt.Input("concurrency"); c != "" {
		if o.Concurrency, err = strconv.Atoi(c); err != nil || o.Concurrency < 1 {
			return usagef("input concurrency is %q: give a number of stacks, at least 1", c)
		}
	}
	switch ra := rt.Input("require-approval"); ra {
	case "":
	case "never", "broadening":
		o.RequireApproval = ra
	default:
		return usagef("input require-approval is %q: use never or broadening", ra)
	}
	if o.RequireApproval == "broadening" && approvedByLabel(prs, rt.Input("override-label")) {
		// Reviewers approved the broadening on the pull request(s) with the override label.
		rt.Notice("cdkbot: require-approval broadening: approved by the %q label on every merged pull request", overrideLabel(rt.Input("override-label")))
		o.RequireApproval = "never"
	}
	o.OnPlan = func(p *deployplan.Plan) { gh.openDeployments(ctx, p, push.After) }
	res, err := deployAssembly(ctx, streams, a, o, rt)
	if res != nil {
		rep.Outcomes = res.Outcomes
	}
	failed := err != nil || rep.Failed()
	gh.finish(ctx, rep, prs, push, failed)
	rt.Output("outputs-file", o.OutputsFile)
	if err != nil {
		return err
	}
	return nil
}

func overrideLabel(input string) string {
	if input == "" {
		return review.DefaultOverrideLabel
	}
	return input
}

// approvedByLabel is true when every merged pull request carries the override label, the same
// label that approves failing gates in review.
func approvedByLabel(prs []githubapi.MergedPullRequest, input string) bool {
	for _, pr := range prs {
		if !slices.Contains(pr.Labels, overrideLabel(input)) {
			return false
		}
	}
	return len(prs) > 0
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

// mergeReporter tells GitHub about a deploy. GitHub trouble is a warning, never a reason to
// stop deploying or to hide the result: the job summary and log always have it.
type mergeReporter struct {
	rt          *ghaction.Runtime
	client      *githubapi.Client
	deployments map[string]int64 // GitHub deployment id by AWS environment
}

func (g *mergeReporter) warn(what string, err error) {
	g.rt.Warning("cdkbot: %s: %v", what, err)
}

func (g *mergeReporter) mergedPullRequests(ctx context.Context, push ghaction.Push) []githubapi.MergedPullRequest {
	prs, err := g.client.MergedPullRequests(ctx, push.DefaultBranch, push.Commits)
	if err != nil {
		g.warn("could not find the merged pull requests", err)
	}
	var nums []string
	for _, pr := range prs {
		nums = append(nums, "#"+strconv.Itoa(pr.Number))
	}
	if len(nums) > 0 {
		g.rt.Notice("cdkbot: deploying %s, merged by %s", shortRev(push.After), strings.Join(nums, ", "))
	}
	return prs
}

// unreviewed compares the assembly with the newest review marker on each merged pull request.
// With several pull requests a stack counts as reviewed when any review saw its template.
func (g *mergeReporter) unreviewed(ctx context.Context, a *assembly.Assembly, prs []githubapi.MergedPullRequest, rev string) ([]string, error) {
	deploying, err := review.TemplateHashes(a)
	if err != nil {
		return nil, &inputError{err}
	}
	if len(prs) == 0 {
		return []string{fmt.Sprintf("%s was pushed without a merged pull request: no review saw it", shortRev(rev))}, nil
	}
	seen := map[string]bool{}
	var lines []string
	for _, pr := range prs {
		bodies, err := g.client.OwnCommentBodies(ctx, pr.Number, func(b string) bool {
			m, ok := render.ParseMarker(b)
			return ok && m.Templates != nil
		})
		if err != nil {
			g.warn(fmt.Sprintf("could not read the review of #%d", pr.Number), err)
		}
		if len(bodies) == 0 {
			lines = append(lines, fmt.Sprintf("#%d has no cdkbot review", pr.Number))
			continue
		}
		m, _ := render.ParseMarker(bodies[len(bodies)-1])
		where := fmt.Sprintf("#%d at %s", pr.Number, shortRev(m.HeadSHA))
		if m.HeadSHA != "" && pr.HeadSHA != "" && m.HeadSHA != pr.HeadSHA {
			lines = append(lines, fmt.Sprintf("#%d merged %s, but its review is of %s", pr.Number, shortRev(pr.HeadSHA), shortRev(m.HeadSHA)))
		}
		for id, h := range deploying {
			if m.Templates[id] == h {
				seen[id] = true
			}
		}
		for _, u := range review.Unreviewed(m.Templates, deploying, where) {
			if !seen[strings.SplitN(u, ":", 2)[0]] {
				lines = append(lines, u)
			}
		}
	}
	// A stack any review saw as it is now is reviewed, whichever pull request changed it.
	return slices.DeleteFunc(lines, func(l string) bool { return seen[strings.SplitN(l, ":", 2)[0]] }), nil
}

// openDeployments records one GitHub deployment per AWS environment, in progress.
func (g *mergeReporter) openDeployments(ctx context.Context, p *deployplan.Plan, rev string) {
	g.deployments = map[string]int64{}
	for _, s := range p.Stacks {
		env := githubEnvironment(s.Env)
		if _, ok := g.deployments[env]; ok {
			continue
		}
		id, err := g.client.CreateDeployment(ctx, rev, env, "cdkbot deploy of "+shortRev(rev))
		if err != nil {
			g.warn("could not create the GitHub deployment of "+env, err)
			g.deployments[env] = 0
			continue
		}
		g.deployments[env] = id
		if err := g.client.SetDeploymentStatus(ctx, id, "in_progress", g.rt.RunURL(), "deploying"); err != nil {
			g.warn("could not update the GitHub deployment of "+env, err)
		}
	}
}

// githubEnvironment names an AWS environment for GitHub: aws://123456789012/us-east-1 →
// 123456789012-us-east-1.
func githubEnvironment(env string) string {
	return strings.ReplaceAll(strings.TrimPrefix(env, "aws://"), "/", "-")
}

// finish reports the result everywhere it belongs.
func (g *mergeReporter) finish(ctx context.Context, rep *render.DeployReport, prs []githubapi.MergedPullRequest, push ghaction.Push, failed bool) {
	failedEnv := map[string]bool{}
	for _, o := range rep.Outcomes {
		if !o.Result.OK() {
			failedEnv[githubEnvironment(o.Environment)] = true
		}
	}
	for env, id := range g.deployments {
		if id == 0 {
			continue
		}
		state, desc := "success", "deployed"
		if failedEnv[env] || (failed && len(rep.Outcomes) == 0) {
			state, desc = "failure", "failed"
		}
		if err := g.client.SetDeploymentStatus(ctx, id, state, g.rt.RunURL(), desc); err != nil {
			g.warn("could not update the GitHub deployment of "+env, err)
		}
	}
	var comment bytes.Buffer
	if err := render.DeployMarkdown(&comment, *rep); err != nil {
		g.warn("could not render the deploy report", err)
		return
	}
	summary := *rep
	summary.Key = ""
	var sum bytes.Buffer
	_ = render.DeployMarkdown(&sum, summary)
	g.rt.Summary(sum.String())
	deployed := 0
	for _, o := range rep.Outcomes {
		if o.Result.OK() {
			deployed++
		}
	}
	g.rt.Output("deployed", strconv.Itoa(deployed))
	g.rt.Output("failed", strconv.FormatBool(failed))
	var nums []string
	for _, pr := range prs {
		nums = append(nums, "#"+strconv.Itoa(pr.Number))
		res, err := g.client.UpsertComment(ctx, pr.Number, comment.String(), func(b string) bool {
			key, ok := render.MarkerKey(b)
			return ok && key == rep.Key
		})
		switch {
		case cannotWrite(err):
			g.rt.Warning("cdkbot: the token cannot comment on #%d (%v); the deploy report is in the job summary", pr.Number, err)
		case err != nil:
			g.warn(fmt.Sprintf("could not comment on #%d", pr.Number), err)
		default:
			g.rt.Notice("cdkbot: deploy comment %s on #%d (%s)", res.Action, pr.Number, res.URL)
		}
	}
	if !failed {
		return
	}
	merged := "pushed directly"
	if len(nums) > 0 {
		merged = "merged by " + strings.Join(nums, ", ")
	}
	body := fmt.Sprintf("The deploy of %s (%s) on `%s` failed: [the run](%s).\n\n%s", push.After, merged, push.Branch, rep.RunURL, sum.String())
	res, err := g.client.ReportIssue(ctx, FailureLabel, fmt.Sprintf("cdkbot: deploy on %s failed", push.Branch), body)
	if err != nil {
		g.warn("could not open or update the deploy-failure issue", err)
		return
	}
	g.rt.Notice("cdkbot: deploy failure reported in issue #%d (%s)", res.ID, res.URL)
}
