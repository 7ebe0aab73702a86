package action

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// FailureLabel marks the one issue a failing deploy on the default branch keeps open.
const FailureLabel = "cdkbot-deploy-failed"

// Merge is one push to deploy.
type Merge struct {
	Branch, DefaultBranch string
	After                 string   // the commit the branch now points at
	Commits               []string // the pushed commits
	Key                   string   // the review comments' key (workflow/job/directory)
	RunURL                string
	// OnUnreviewed is "warn" or "refuse": what to do when a stack differs from what reviewers saw.
	OnUnreviewed string
	Gate         Gate // the approval rule and override label require-approval: broadening uses
	// ShowOutputs puts stack output values in the pull request comments and the job summary.
	ShowOutputs bool
}

// DeployOnMerge is the action on a push to the default branch: find the pull requests the push
// merged, compare what is about to deploy with what their reviews showed, publish and deploy,
// then report on each pull request, in the Deployments API, in the job summary and outputs,
// and in one issue when the deploy failed. GitHub trouble is a warning, never a reason to stop
// deploying or to hide the result.
func DeployOnMerge(ctx context.Context, d Deps, in Merge) error {
	if in.Branch == "" || in.Branch != in.DefaultBranch {
		d.Runner.Notice("cdkbot: push to %q, not the default branch %q: nothing to deploy", in.Branch, in.DefaultBranch)
		return nil
	}
	m := &merge{d: d, in: in}
	m.prs = m.mergedPullRequests(ctx)
	rep := &deployplan.Report{Key: deployKeyPrefix + in.Key, Revision: in.After, RunURL: in.RunURL,
		ShowOutputs: in.ShowOutputs}
	// Whatever stops the deploy before it starts is reported like a failed deploy: on the pull
	// requests and in the failure issue, not only in the log.
	stopped := func(err error) error {
		rep.Refused = "nothing deployed: " + err.Error()
		d.Runner.Error("cdkbot: %s", rep.Refused)
		m.finish(ctx, rep, true)
		return err
	}
	a, err := d.Deployer.Assembly(ctx)
	if err != nil {
		return stopped(err)
	}
	policy, err := d.Deployer.Policy()
	if err != nil {
		return stopped(err)
	}
	// The templates that deploy, policy applied once: what is compared with the reviews is
	// what deploys.
	mutated, err := review.MutatedTemplates(a, policy, nil)
	if err != nil {
		return stopped(failure.InputErr(err))
	}
	// Every stack's bytes, read once: what is compared is what reaches CloudFormation, whatever
	// rewrites the assembly's files afterwards (an asset build, a process the app left behind).
	templates, err := review.DeployTemplates(a, mutated)
	if err != nil {
		return stopped(failure.InputErr(err))
	}
	c, err := m.compare(ctx, a, templates)
	if err != nil {
		return stopped(err)
	}
	rep.Unreviewed = c.lines
	for _, u := range rep.Unreviewed {
		d.Runner.Warning("cdkbot: not as reviewed: %s", u)
	}
	switch {
	case len(rep.Unreviewed) > 0 && c.bound:
		// What holds is this comparison: the review of code its author controls is advisory.
		rep.Refused = fmt.Sprintf("nothing deployed: %d item(s) differ from what cdkbot's review of the merged pull "+
			"request showed, and a merge deploys only what its review showed. Review the change in a pull request "+
			"(cdkbot reviews each push to it) and merge once the review shows it.", len(rep.Unreviewed))
	case len(rep.Unreviewed) > 0 && in.OnUnreviewed == "refuse":
		rep.Refused = fmt.Sprintf("on-unreviewed is refuse: nothing deployed, "+
			"because %d item(s) differ from what reviewers saw. "+
			"Review them in a pull request, or deploy with on-unreviewed: warn.", len(rep.Unreviewed))
	}
	if rep.Refused != "" {
		d.Runner.Error("cdkbot: %s", rep.Refused)
		m.finish(ctx, rep, true)
		return ErrBlocked
	}
	requireApproval, err := d.Deployer.RequireApproval()
	if err != nil {
		return stopped(err)
	}
	approved := false
	if requireApproval == "broadening" {
		approved = m.approved(ctx)
	}
	res, err := d.Deployer.Deploy(ctx, a, DeployRequest{Templates: templates, Running: c.running, Approved: approved,
		OnPlan: func(p *deployplan.Plan) { m.openDeployments(ctx, p) }})
	if res != nil {
		rep.Outcomes = res.Outcomes
	}
	m.finish(ctx, rep, err != nil || rep.Failed())
	return err
}

type merge struct {
	d           Deps
	in          Merge
	prs         []githubapi.MergedPullRequest
	prsErr      error            // why the merged pull requests could not be read
	deployments map[string]int64 // GitHub deployment id by AWS environment
}

func (m *merge) warn(what string, err error) {
	m.d.Runner.Warning("cdkbot: %s: %v", what, err)
}

func (m *merge) mergedPullRequests(ctx context.Context) []githubapi.MergedPullRequest {
	prs, err := m.d.GitHub.MergedPullRequests(ctx, m.in.DefaultBranch, m.in.Commits)
	if err != nil {
		m.warn("could not find the merged pull requests", err)
		m.prsErr = err
	}
	var nums []string
	for _, pr := range prs {
		nums = append(nums, "#"+strconv.Itoa(pr.Number))
	}
	if len(nums) > 0 {
		m.d.Runner.Notice("cdkbot: deploying %s, merged by %s",
			commitid.Short(m.in.After, commitid.GitHub), strings.Join(nums, ", "))
	}
	return prs
}

// approved is require-approval: broadening's rule: every merged pull request was approved
// under the same rule as its review's gates (someone other than its author with write access),
// and the approval covers everything its last review showed.
func (m *merge) approved(ctx context.Context) bool {
	if len(m.prs) == 0 {
		return false // pushed directly: nobody approved
	}
	for _, pr := range m.prs {
		got, ignored, shown := boundApprovals(ctx, m.d.GitHub, m.in.Gate.Approval, m.in.Gate.label(), m.in.Key,
			pr.Facts)
		for _, why := range ignored {
			m.d.Runner.Warning("cdkbot: require-approval broadening, #%d: %s", pr.Number, why)
		}
		got = slices.DeleteFunc(got, func(a review.Approval) bool {
			if coversAll(a, shown) {
				return false
			}
			m.d.Runner.Warning("cdkbot: require-approval broadening, #%d: the approval by %s (%s) does not cover "+
				"everything its last review showed", pr.Number, a.By, a.Via)
			return true
		})
		if len(got) == 0 {
			return false
		}
		m.d.Runner.Notice("cdkbot: require-approval broadening: #%d %s", pr.Number, render.ApprovedBy(got))
	}
	return true
}

// comparison is what the deploy found when it compared itself with the reviews.
type comparison struct {
	lines []string // "what: why", one per difference, sorted as found
	// bound is true when a merged pull request has a review cdkbot wrote and can verify: the
	// deploy is then bound to it, whatever on-unreviewed says.
	bound bool
	// running are what each stack must run before it deploys: the base of the review that
	// showed it as it now is.
	running map[string]deployplan.Expectation
}

// compare checks what is about to deploy (templates: policy-mutated where the policy changes
// them) against the newest review marker on each merged pull request, written by the token's
// own identity (anyone can paste a marker): every stack's deploy identity (name, environment,
// template, parameters, tags, termination protection, notifications, roles, asset content) must
// be one a review recorded, the merged head must be the reviewed one, and the review must not
// have blocked. With several pull requests a stack counts as reviewed when any review saw it as
// it is now.
func (m *merge) compare(ctx context.Context, a *assembly.Assembly, templates map[string][]byte) (comparison, error) {
	deploying, err := review.Identities(a, templates)
	if err != nil {
		return comparison{}, failure.InputErr(err)
	}
	if m.prsErr != nil {
		// Fail closed: the push may well have merged a pull request whose review binds it.
		return comparison{bound: true, lines: []string{fmt.Sprintf("cdkbot could not read which pull requests %s "+
			"merged (%v), so it cannot tell what their reviews showed", commitid.Short(m.in.After, commitid.GitHub),
			m.prsErr)}}, nil
	}
	if len(m.prs) == 0 {
		return comparison{lines: []string{fmt.Sprintf("%s was pushed without a merged pull request: no review saw it",
			commitid.Short(m.in.After, commitid.GitHub))}}, nil
	}
	c := comparison{running: map[string]deployplan.Expectation{}}
	if problems := review.NestedTemplateProblems(a, templates); len(problems) > 0 {
		c.bound, c.lines = true, problems // CloudFormation would read a template no review showed
	}
	seen := map[string]bool{}
	var stackLines [][2]string // stack id, line
	for _, pr := range m.prs {
		// The review comments, and the comments holding the identities of a review too large to
		// hold them itself, in one reading.
		all, err := m.d.GitHub.OwnCommentsWithEditors(ctx, pr.Number, func(b string) bool {
			if mk, ok := render.ParseMarker(b); ok {
				return !strings.HasPrefix(mk.Key, deployKeyPrefix)
			}
			_, ok := render.ParseIdentityPart(b)
			return ok
		})
		if err != nil {
			// Fail closed: a review whose comments, or who last edited them, cannot be read may
			// be one that binds this deploy, or one a collaborator rewrote.
			c.bound = true
			c.lines = append(c.lines, fmt.Sprintf("cdkbot could not read #%d's review, or who last edited it (%v): "+
				"nothing can be compared with it", pr.Number, err))
			continue
		}
		// A collaborator with write access can edit cdkbot's own comment (a marker's identities, its
		// "blocked"), and GitHub still names cdkbot its author: a review comment someone else edited
		// last is not cdkbot's word. cdkbot's own edits (a review again) are.
		var editors []string
		for _, cm := range all {
			if cm.EditedBy != "" && !slices.Contains(editors, "@"+cm.EditedBy) {
				editors = append(editors, "@"+cm.EditedBy)
			}
		}
		if len(editors) > 0 {
			c.bound = true
			c.lines = append(c.lines, fmt.Sprintf("#%d's cdkbot review was edited by %s: review it again "+
				"(/cdkbot review) before deploying", pr.Number, strings.Join(editors, ", ")))
			continue
		}
		var bodies, parts []string
		for _, cm := range all {
			b := cm.Body
			if _, ok := render.ParseMarker(b); ok {
				bodies = append(bodies, b)
			} else {
				parts = append(parts, b)
			}
		}
		if len(bodies) == 0 && pr.Fork {
			// A fork's token cannot comment: its review, if any, is one cdkbot cannot verify.
			c.bound = true
			c.lines = append(c.lines, fmt.Sprintf("#%d is from a fork and has no review cdkbot wrote: a fork's review "+
				"cannot be verified (review it again from a branch of this repository, or deploy by hand)", pr.Number))
			continue
		}
		if len(bodies) == 0 {
			c.lines = append(c.lines, fmt.Sprintf("#%d has no cdkbot review", pr.Number))
			continue
		}
		c.bound = true // a pull request cdkbot reviewed, even where it cannot verify the review
		latest, fannedOut, unreadable := latestReviews(pr.Number, bodies, parts)
		keys := slices.Sorted(maps.Keys(latest))
		legOf := slices.DeleteFunc(slices.Clone(fannedOut), func(k string) bool {
			return !strings.HasPrefix(m.in.Key, k+"/")
		})
		switch _, own := latest[m.in.Key]; {
		case len(unreadable) > 0:
			// Never a partial comparison: a combined review whose records cannot be read whole
			// stands for none of its legs, and nothing else may stand in for them.
			c.lines = append(c.lines, unreadable...)
			continue
		case len(legOf) > 1:
			// Fan-outs keyed cdk and cdk/review both name a leg cdk/review/shop/dev (apps
			// review/shop and shop): one's record cannot tell which app it is of.
			c.lines = append(c.lines, fmt.Sprintf("#%d's combined reviews %s each hold legs keyed like %s: give the "+
				"fan-outs keys that are not each other's prefix (cdkbot apps --key)", pr.Number,
				strings.Join(legOf, " and "), m.in.Key))
			continue
		case own:
			// A deploy leg (key input: the leg's key) is bound to its own leg's review alone.
			keys = []string{m.in.Key}
		case len(legOf) > 0:
			// A leg of a fanned-out review whose review is not there: its leg failed, sent no valid
			// report, or did not run; nothing else stands for it.
			c.lines = append(c.lines, fmt.Sprintf("#%d's combined review holds no review of %s (its leg failed, "+
				"sent no valid report or did not run, or the pull request did not change that app): review the pull "+
				"request again so that leg reports", pr.Number, m.in.Key))
			continue
		}
		if len(keys) == 0 {
			// Only combined reviews without a leg recorded: nothing says what any stack should be.
			c.lines = append(c.lines, fmt.Sprintf("#%d's combined review records no app's review: every leg failed, "+
				"sent no valid report, or did not run; review the pull request again", pr.Number))
			continue
		}
		// Otherwise the newest review of each key (a monorepo has one per app): each must hold, so a
		// review that blocked cannot be outvoted by another app's review recording the same stacks.
		for _, key := range keys {
			m.compareReview(&c, pr, latest[key], parts, deploying, seen, &stackLines)
		}
	}
	// A stack any review saw as it is now is reviewed, whichever pull request changed it.
	for _, sl := range stackLines {
		if !seen[sl[0]] {
			c.lines = append(c.lines, sl[1])
		}
	}
	return c, nil
}

// latestReviews are the newest review of each key among bodies (cdkbot's review comments on pull
// request pr, oldest first): a combined review of a fan-out stands for each of its legs, by the
// leg's key, with the record the leg's review made (read back from parts when it kept them in
// comments of their own); fannedOut are the combined reviews' keys, unreadable what could not
// be read back.
func latestReviews(pr int, bodies, parts []string) (latest map[string]render.Marker, fannedOut, unreadable []string) {
	latest = map[string]render.Marker{}
	newest := map[string]int{}        // by marker key: only the newest comment of a key is its word
	recordedBy := map[string]string{} // leg key → the key of the combined review recording it
	mks := make([]render.Marker, len(bodies))
	for i, b := range bodies {
		mks[i], _ = render.ParseMarker(b)
		newest[mks[i].Key] = i
	}
	for i, b := range bodies {
		mk := mks[i]
		if newest[mk.Key] != i {
			continue
		}
		legs, ok, err := render.FanInLegs(b, parts)
		switch {
		case !ok:
			latest[mk.Key] = mk
			continue
		case err != nil:
			unreadable = append(unreadable, fmt.Sprintf("#%d's combined review keeps its legs' records in comments "+
				"of their own, which cannot be read whole (%v): review it again", pr, err))
		}
		fannedOut = append(fannedOut, mk.Key)
		for _, leg := range legs {
			if !strings.HasPrefix(leg.Key, mk.Key+"/") { // a leg of this review, not another key's
				continue
			}
			if by, ok := recordedBy[leg.Key]; ok && by != mk.Key {
				// Two fan-outs (cdk and cdk/review, with an app review/shop and an app shop) name
				// one leg key: neither record may stand for the other's app.
				unreadable = append(unreadable, fmt.Sprintf("#%d's combined reviews %s and %s both record a leg "+
					"keyed %s: give the fan-outs keys that are not each other's prefix (cdkbot apps --key)", pr,
					by, mk.Key, leg.Key))
			}
			recordedBy[leg.Key] = mk.Key
			latest[leg.Key] = leg
		}
	}
	return latest, fannedOut, unreadable
}

// compareReview compares what deploys (deploying, by stack) with one review marker mk of pull
// request pr, adding what differs to c; seen collects the stacks some review saw as they are now,
// stackLines the differences of the others.
func (m *merge) compareReview(c *comparison, pr githubapi.MergedPullRequest, mk render.Marker, parts []string,
	deploying map[string]review.Identity, seen map[string]bool, stackLines *[][2]string) {
	var err error
	if mk.Unverified {
		c.lines = append(c.lines,
			fmt.Sprintf("#%d was reviewed in a fork's workflow, whose report cdkbot cannot verify", pr.Number))
		return
	}
	where := fmt.Sprintf("#%d at %s", pr.Number, commitid.Short(mk.HeadSHA, commitid.GitHub))
	if mk.Stacks == nil && mk.StacksDigest != "" {
		// Every identity is read back, or the review does not count: never a partial comparison.
		if mk.Stacks, err = render.JoinIdentityParts(mk, parts); err != nil {
			c.lines = append(c.lines, fmt.Sprintf("#%d's review keeps its deploy identities in comments of their own, "+
				"which cannot be read whole (%v): review it again", pr.Number, err))
			return
		}
	}
	switch {
	case mk.Stacks == nil:
		c.lines = append(c.lines, fmt.Sprintf("#%d's review was made by a cdkbot that recorded no deploy identities: "+
			"review it again", pr.Number))
		return
	case mk.HeadSHA != "" && pr.HeadSHA != "" && mk.HeadSHA != pr.HeadSHA:
		c.lines = append(c.lines, fmt.Sprintf("#%d merged %s, but its review is of %s", pr.Number,
			commitid.Short(pr.HeadSHA, commitid.GitHub), commitid.Short(mk.HeadSHA, commitid.GitHub)))
	case mk.Blocked:
		c.lines = append(c.lines, fmt.Sprintf("#%d's review blocked this change (a gate failed and no approval "+
			"covered it)", pr.Number))
	}
	for _, id := range slices.Sorted(maps.Keys(deploying)) {
		enc, ok := mk.Stacks[id]
		if !ok {
			*stackLines = append(*stackLines, [2]string{id, fmt.Sprintf("%s: not in the review of %s", id, where)})
			continue
		}
		reviewed, err := review.ParseIdentity(enc)
		if err != nil {
			*stackLines = append(*stackLines, [2]string{id, fmt.Sprintf("%s: the review of %s recorded it unreadably",
				id, where)})
			continue
		}
		if differs := reviewed.Differs(deploying[id]); len(differs) > 0 {
			verb := "differs"
			if len(differs) > 1 {
				verb = "differ"
			}
			*stackLines = append(*stackLines, [2]string{id, fmt.Sprintf("%s: %s %s from the review of %s",
				id, strings.Join(differs, ", "), verb, where)})
			continue
		}
		if !seen[id] {
			switch reviewed.Base {
			case "": // the review recorded no base
			case review.NoBase:
				c.running[id] = deployplan.Expectation{Absent: true}
			default:
				c.running[id] = deployplan.Expectation{Digest: reviewed.Base}
			}
		}
		seen[id] = true
	}
}

// openDeployments records one GitHub deployment per AWS environment, in progress.
func (m *merge) openDeployments(ctx context.Context, p *deployplan.Plan) {
	m.deployments = map[string]int64{}
	for _, s := range p.Stacks {
		env := githubEnvironment(s.Env)
		if _, ok := m.deployments[env]; ok {
			continue
		}
		id, err := m.d.GitHub.CreateDeployment(ctx, m.in.After, env,
			"cdkbot deploy of "+commitid.Short(m.in.After, commitid.GitHub))
		if err != nil {
			m.warn("could not create the GitHub deployment of "+env, err)
			m.deployments[env] = 0
			continue
		}
		m.deployments[env] = id
		if err := m.d.GitHub.SetDeploymentStatus(ctx, id, "in_progress", m.in.RunURL, "deploying"); err != nil {
			m.warn("could not update the GitHub deployment of "+env, err)
		}
	}
}

// githubEnvironment names an AWS environment for GitHub: aws://123456789012/us-east-1 →
// 123456789012-us-east-1.
func githubEnvironment(env string) string {
	return strings.ReplaceAll(strings.TrimPrefix(env, "aws://"), "/", "-")
}

// finish reports the result everywhere it belongs.
func (m *merge) finish(ctx context.Context, rep *deployplan.Report, failed bool) {
	failedEnv := map[string]bool{}
	for _, o := range rep.Outcomes {
		if !o.Result.OK() {
			failedEnv[githubEnvironment(o.Environment)] = true
		}
	}
	for env, id := range m.deployments {
		if id == 0 {
			continue
		}
		state, desc := "success", "deployed"
		if failedEnv[env] || (failed && len(rep.Outcomes) == 0) {
			state, desc = "failure", "failed"
		}
		if err := m.d.GitHub.SetDeploymentStatus(ctx, id, state, m.in.RunURL, desc); err != nil {
			m.warn("could not update the GitHub deployment of "+env, err)
		}
	}
	var comment bytes.Buffer
	if err := render.DeployMarkdown(&comment, *rep); err != nil {
		m.warn("could not render the deploy report", err)
		return
	}
	summary := *rep
	summary.Key = ""
	var sum bytes.Buffer
	_ = render.DeployMarkdown(&sum, summary)
	m.d.Runner.Summary(sum.String())
	deployed := 0
	for _, o := range rep.Outcomes {
		if o.Result.OK() {
			deployed++
		}
	}
	m.d.Runner.Output("deployed", strconv.Itoa(deployed))
	m.d.Runner.Output("failed", strconv.FormatBool(failed))
	var nums []string
	for _, pr := range m.prs {
		nums = append(nums, "#"+strconv.Itoa(pr.Number))
		res, err := m.d.GitHub.UpsertComment(ctx, pr.Number, comment.String(), func(b string) bool {
			key, ok := render.MarkerKey(b)
			return ok && key == rep.Key
		})
		switch {
		case githubapi.CannotWrite(err):
			m.d.Runner.Warning("cdkbot: the token cannot comment on #%d (%v); the deploy report is in the job summary",
				pr.Number, err)
		case err != nil:
			m.warn(fmt.Sprintf("could not comment on #%d", pr.Number), err)
		default:
			m.d.Runner.Notice("cdkbot: deploy comment %s on #%d (%s)", res.Action, pr.Number, res.URL)
		}
	}
	if !failed {
		return
	}
	merged := "pushed directly"
	if len(nums) > 0 {
		merged = "merged by " + strings.Join(nums, ", ")
	}
	body := fmt.Sprintf("The deploy of %s (%s) on `%s` failed: [the run](%s).\n\n%s",
		m.in.After, merged, m.in.Branch, rep.RunURL, sum.String())
	res, err := m.d.GitHub.ReportIssue(ctx, FailureLabel, fmt.Sprintf("cdkbot: deploy on %s failed", m.in.Branch), body)
	if err != nil {
		m.warn("could not open or update the deploy-failure issue", err)
		return
	}
	m.d.Runner.Notice("cdkbot: deploy failure reported in issue #%d (%s)", res.ID, res.URL)
}
