package action

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/pullrequest"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// SummaryLimit is GitHub's job summary size limit.
const SummaryLimit = 1 << 20

// DefaultCheckName names the check run branch protection and merge queues require.
const DefaultCheckName = "cdkbot"

// commentBudgets are tried in turn until GitHub accepts the comment.
var commentBudgets = []int{render.GitHubCommentLimit - 1024, 32 << 10, 16 << 10, 8 << 10}

// Deps are the adapters a flow drives.
type Deps struct {
	GitHub   GitHub
	Runner   Runner
	Reviewer Reviewer
	Git      Git // nil when the reviewer was given assemblies
	Deployer Deployer
	// SaveReport writes the report file a fork's review leaves for a trusted workflow; it
	// returns the file's path.
	SaveReport func(SavedReport) (string, error)
}

// SavedReport is the report file: what was reviewed and the comment, so a trusted workflow can
// post it for a fork's pull request.
type SavedReport struct {
	PullRequest int             `json:"pullRequest"`
	Key         string          `json:"key"`
	Comment     string          `json:"comment"`
	Failed      bool            `json:"failed"`
	Review      json.RawMessage `json:"review"`
	// Identities are every head stack's deploy identity, by qualified id, when the comment's
	// marker keeps only their digest (past about 50 stacks): a fan-in reads them from here, as a
	// leg that posts no comment (comment: off) has no identity comments for the deploy to read.
	Identities map[string]string `json:"identities,omitempty"`
}

// Gate is how a review is enforced: the check run, approvals and annotations.
type Gate struct {
	CheckName     string // "" is DefaultCheckName; "off" creates none
	OverrideLabel string // "" is review.DefaultOverrideLabel
	Approval      ApprovalRule
	// AnnotationPath is the repository file check-run annotations point at (the app's cdk.json).
	AnnotationPath string
	RunURL         string
	// Run is this workflow run's attempt ("<run id>.<attempt>"), which makes its check run's
	// external id its own; "" outside Actions.
	Run string
}

func (g Gate) label() string {
	if g.OverrideLabel == "" {
		return review.DefaultOverrideLabel
	}
	return g.OverrideLabel
}

// PullRequestReview is one review of a pull request.
type PullRequestReview struct {
	Event      string // pull_request, pull_request_review, pull_request_target, issue_comment
	PR         pullrequest.Facts
	CheckedOut string // GITHUB_SHA: on pull_request, GitHub's test merge commit
	Key        string
	// Comment is the comment input: sticky (or ""), new, changes or off (pipeline.CommentSticky…).
	Comment string
	// Labels is the result-labels input: on sets and clears the verdict's labels; off (or "") not.
	Labels string
	Gate   Gate
}

// posting reads how the review is posted (the comment and result-labels inputs) with the review
// settings' own parsers: a value they refuse fails the run before anything is reviewed, never
// taken for the default.
func posting(in PullRequestReview) (pipeline.ReviewOptions, error) {
	var o pipeline.ReviewOptions
	for _, in := range [][2]string{{"comment", in.Comment}, {"result-labels", in.Labels}} {
		s := pipeline.ReviewSetting(in[0])
		v := in[1]
		if v == "" {
			v = s.Default
		}
		if err := s.Set(&o, v); err != nil {
			return o, failure.Usagef("input %s is %q: %v", in[0], v, err)
		}
	}
	return o, nil
}

// links are where the comment's commits and run are: the repository and the run from the run's
// URL (GITHUB_SERVER_URL/GITHUB_REPOSITORY/actions/runs/GITHUB_RUN_ID), the attempt from Run.
func (g Gate) links() render.Links {
	l := render.Links{Run: g.RunURL, Command: true}
	repo, _, ok := strings.Cut(g.RunURL, "/actions/runs/")
	if !ok {
		return render.Links{Command: true}
	}
	l.Repository = repo
	if _, attempt, ok := strings.Cut(g.Run, "."); ok && attempt != "" {
		l.Run += "/attempts/" + attempt
	}
	return l
}

// checkoutEvent is true for the events whose job runs with the pull request's test merge commit
// checked out and, for a fork, a read-only token: pull_request and pull_request_review. Only
// there may the pull request's code run; pull_request_target and issue_comment hold a write token.
func checkoutEvent(event string) bool {
	return event == "pull_request" || event == "pull_request_review"
}

// noDeployed is true when the review must not ask AWS what runs: pull_request_target runs with
// the base repository's secrets beside pull request input, and a fork's pull request is not the
// repository's own change.
func noDeployed(event string, fork bool) bool { return !checkoutEvent(event) || fork }

// ReviewPullRequest reviews a pull request: what merging it would change (GitHub's test merge
// commit against the base it was made from), who approved, the sticky comment, the check run,
// the job summary and outputs. It returns ErrBlocked when a gate fails.
func ReviewPullRequest(ctx context.Context, d Deps, in PullRequestReview) error {
	post, err := posting(in)
	if err != nil {
		return err
	}
	req := ReviewRequest{Key: in.Key, HeadSHA: in.PR.HeadSHA,
		NoSynth: !checkoutEvent(in.Event), NoDeployed: noDeployed(in.Event, in.PR.Fork)}
	if req.NoSynth && !d.Reviewer.UsesAssemblies() {
		d.Runner.Warning("cdkbot: %s runs with a write token, so pull request code is never run; "+
			"pass base-assembly and head-assembly synthesized by a trusted job", in.Event)
	}
	if d.Reviewer.UsesAssemblies() {
		req.Base, req.Head = in.PR.BaseSHA, in.PR.HeadSHA
	} else {
		var note string
		var err error
		if req.Base, req.Head, req.MergeSHA, note, err = revisions(d.Git, in); err != nil {
			return err
		}
		if note != "" {
			req.Notes = append(req.Notes, note)
		}
	}
	var ignored []string
	req.Approvals, ignored, _ = boundApprovals(ctx, d.GitHub, in.Gate.Approval, in.Gate.label(), in.Key, in.PR)
	req.Notes = append(req.Notes, ignored...)
	rep, err := d.Reviewer.Review(ctx, req)
	if err != nil {
		return err
	}

	links := in.Gate.links()
	var full, js bytes.Buffer
	if err := render.ReviewComment(&full, rep, render.CommentView{Budget: SummaryLimit, Links: links}); err != nil {
		return err
	}
	d.Runner.Summary(full.String())
	if err := render.ReviewJSON(&js, rep); err != nil {
		return err
	}
	body, err := commentBody(rep, commentBudgets[0], links)
	if err != nil {
		return err
	}
	saved := SavedReport{PullRequest: in.PR.Number, Key: rep.Key,
		Comment: body, Failed: rep.Failed(), Review: bytes.TrimSpace(js.Bytes())}
	if m, ok := render.ParseMarker(body); ok && m.StacksDigest != "" {
		saved.Identities = review.IdentityStrings(rep.Identity)
	}
	reportPath, err := d.SaveReport(saved)
	if err != nil {
		return err
	}
	c := render.DiffReport{Stacks: rep.Stacks}.Count()
	d.Runner.Output("has-changes", strconv.FormatBool(c.StacksChanged > 0))
	d.Runner.Output("replacements", strconv.Itoa(c.Replace+c.MayReplace))
	d.Runner.Output("destroys", strconv.Itoa(c.Destroy))
	d.Runner.Output("security-broadening", strconv.FormatBool(c.Broadened))
	d.Runner.Output("report-file", reportPath)

	readOnly := in.PR.Fork && checkoutEvent(in.Event)
	switch {
	case post.Comment == pipeline.CommentOff:
	case readOnly:
		d.Runner.Notice("cdkbot: this pull request comes from a fork, whose token cannot comment. "+
			"The review is in the job summary and in %s. "+
			"To post it: upload that file as an artifact, and in a workflow triggered by workflow_run "+
			"download it and run `cdkbot action comment --report FILE` with a token that can write.", reportPath)
	case post.Comment == pipeline.CommentChanges && render.ReviewVerdict(rep) == render.NoChanges:
		if err := removeComment(ctx, d, in.PR.Number, rep); err != nil {
			return err
		}
	default:
		if err := postComment(ctx, d, in.PR.Number, rep, post.Comment == pipeline.CommentNew, links); err != nil {
			return err
		}
	}
	if !readOnly {
		if post.ResultLabels {
			setResultLabels(ctx, d, in.PR, rep)
		}
		checkRun(ctx, d, in.Gate, rep, in.PR.HeadSHA)
	}
	return verdict(d.Runner, rep)
}

// removeComment is comment: changes on a pull request that changes nothing: no comment, and the
// review's comments of an earlier run (its sticky comment, the deploy identities it kept apart)
// deleted, so the pull request shows no stale verdict. The check run and the job summary still
// have the review.
func removeComment(ctx context.Context, d Deps, number int, rep *review.Report) error {
	n, err := d.GitHub.DeleteOwnComments(ctx, number, func(b string) bool {
		if key, ok := render.MarkerKey(b); ok {
			return key == rep.Key
		}
		p, ok := render.ParseIdentityPart(b)
		return ok && p.Key == rep.Key
	})
	switch {
	case githubapi.CannotWrite(err):
		d.Runner.Warning("cdkbot: the token cannot delete the review comment on #%d (%v)", number, err)
	case err != nil:
		return fmt.Errorf("delete the review comment on #%d: %w", number, err)
	case n > 0:
		d.Runner.Notice("cdkbot: #%d changes nothing (comment: changes): deleted the review comment", number)
	default:
		d.Runner.Notice("cdkbot: #%d changes nothing (comment: changes): no review comment", number)
	}
	return nil
}

// revisions chooses what to compare: GitHub's test merge commit (what main will hold after
// merging) against its first parent (the base branch as the merge was made), so commits that
// reached main after the branch point are not shown as removed by the pull request. Without
// a test merge commit the head is compared with the merge base, and the note says so.
func revisions(git Git, in PullRequestReview) (base, head, merge, note string, err error) {
	var candidates []string
	if checkoutEvent(in.Event) && in.CheckedOut != "" {
		candidates = append(candidates, in.CheckedOut)
	}
	if in.PR.MergeCommitSHA != "" {
		candidates = append(candidates, in.PR.MergeCommitSHA)
	}
	for _, c := range candidates {
		sha, parents, err := git.Parents(c)
		if err == nil && len(parents) == 2 && parents[1] == in.PR.HeadSHA {
			return parents[0], sha, sha, "", nil
		}
	}
	mb, err := git.MergeBase(in.PR.BaseSHA, in.PR.HeadSHA)
	if err != nil {
		return "", "", "", "", failure.Inputf("cannot tell what pull request #%d changes: %v", in.PR.Number, err)
	}
	note = fmt.Sprintf("There is no test merge commit of this pull request to review "+
		"(it cannot merge as it is, or the checkout is not refs/pull/%d/merge), "+
		"so this review compares the head %s with the merge base %s: "+
		"what the base branch gained since then is not part of it.",
		in.PR.Number, commitid.Short(in.PR.HeadSHA, commitid.GitHub), commitid.Short(mb, commitid.GitHub))
	return mb, in.PR.HeadSHA, "", note, nil
}

// verdict fails the job, with an annotation per failing gate, when the review blocks.
func verdict(r Runner, rep *review.Report) error {
	if !rep.Failed() {
		return nil
	}
	if rep.BaseUnavailable != "" {
		r.Error("cdkbot: %s: blocked, since nobody can tell what the change destroys "+
			"(input base-failure: first-deployment reviews against nothing)", rep.BaseUnavailable)
	}
	for _, g := range rep.Gates {
		switch {
		case g.Failing() && !review.Approvable(g.Name):
			r.Error("cdkbot: gate %s blocks this change: %s. %s", g.Name, strings.Join(g.Items, "; "),
				render.GateAdvice(g.Name))
		case g.Failing():
			r.Error("cdkbot: gate %s blocks this change (%d item(s)); approve with the label %q",
				g.Name, len(g.Items), rep.OverrideLabel)
		}
	}
	return ErrBlocked
}

func commentBody(rep *review.Report, budget int, links render.Links) (string, error) {
	var b bytes.Buffer
	err := render.ReviewComment(&b, rep, render.CommentView{Budget: budget, Links: links})
	return b.String(), err
}

// postComment writes the review's sticky comment (upsertSized). When the comment's marker has
// only the digest of the deploy identities (a large app), the identities go first to comments
// of their own, so the marker never names parts not yet there.
func postComment(
	ctx context.Context, d Deps, number int, rep *review.Report, alwaysNew bool, links render.Links,
) error {
	posted := map[string]bool{} // the identity parts already on the pull request, by body
	return upsertSized(ctx, d, number, rep.Key, alwaysNew, "review",
		func(budget int) (string, error) { return commentBody(rep, budget, links) },
		func(budget int) error { return postIdentities(ctx, d, number, rep, budget, posted) })
}

// upsertSized writes the sticky comment of key (a new one each run with alwaysNew), rendering
// less detail when GitHub rejects the size: body renders it within a budget, and before posts
// first what that comment's marker names (its identity comments). A token that cannot comment
// leaves the review to the job summary, with a warning.
func upsertSized(ctx context.Context, d Deps, number int, key string, alwaysNew bool, what string,
	body func(budget int) (string, error), before func(budget int) error) error {
	ours := func(b string) bool {
		k, ok := render.MarkerKey(b)
		return ok && k == key && !alwaysNew
	}
	for _, budget := range commentBudgets {
		text, err := body(budget)
		if err != nil {
			return err
		}
		if err := before(budget); err != nil {
			return err
		}
		res, err := d.GitHub.UpsertComment(ctx, number, text, ours)
		switch {
		case errors.Is(err, githubapi.ErrBodyTooLarge):
			continue
		case githubapi.CannotWrite(err):
			d.Runner.Warning("cdkbot: the token cannot comment on #%d (%v); the review is in the job summary", number, err)
			return nil
		case err != nil:
			return fmt.Errorf("post the %s on #%d: %w", what, number, err)
		}
		d.Runner.Notice("cdkbot: %s comment %s (%s)", what, res.Action, res.URL)
		return nil
	}
	return fmt.Errorf("GitHub rejected the %s comment even at %d bytes", what, commentBudgets[len(commentBudgets)-1])
}

// postIdentities keeps the comments that hold the review's deploy identities when its comment
// of budget bytes cannot (postIdentityParts).
func postIdentities(ctx context.Context, d Deps, number int, rep *review.Report, budget int,
	posted map[string]bool) error {
	return postIdentityParts(ctx, d, number, render.IdentityComments(rep, budget), posted,
		fmt.Sprintf("the deploy identities of %d stacks", len(rep.Identity)))
}

// postIdentityParts keeps each part of a set of deploy identities in a comment of its own, found
// by its key and part number and edited in place run after run; a part already posted this run
// (posted, by body) is not sent again when the sticky comment is retried smaller. A part GitHub
// refuses as too large is a warning and ends the set (the rest are no smaller): the comment still
// posts, and the deploy, missing the part, refuses.
func postIdentityParts(ctx context.Context, d Deps, number int, parts []string, posted map[string]bool,
	what string) error {
	for _, body := range parts {
		if posted[body] {
			continue
		}
		p, _ := render.ParseIdentityPart(body)
		res, err := d.GitHub.UpsertComment(ctx, number, body, func(b string) bool {
			q, ok := render.ParseIdentityPart(b)
			return ok && q.Key == p.Key && q.Part == p.Part
		})
		switch {
		case errors.Is(err, githubapi.ErrBodyTooLarge):
			d.Runner.Warning("cdkbot: GitHub refused part %d of %s on #%d as too large (%v); "+
				"a merge deploy that needs them will refuse", p.Part, what, number, err)
			return nil
		case githubapi.CannotWrite(err):
			return nil // the comment, or the job summary, says so
		case err != nil:
			return fmt.Errorf("post %s on #%d (part %d of %d): %w", what, number, p.Part, len(parts), err)
		}
		posted[body] = true
		if p.Part == 1 {
			d.Runner.Notice("cdkbot: %s are in %d comment(s) of their own (%s)", what, len(parts), res.URL)
		}
	}
	return nil
}

// checkRun reports the review's verdict as a check run on sha (postCheckRun).
func checkRun(ctx context.Context, d Deps, g Gate, rep *review.Report, sha string) {
	if g.CheckName == "off" {
		return
	}
	var summary bytes.Buffer
	if err := render.ReviewComment(&summary, rep,
		render.CommentView{Budget: githubapi.CheckTextLimit - 1024, Links: g.links()}); err != nil {
		d.Runner.Warning("cdkbot: could not render the check run: %v", err)
		return
	}
	postCheckRun(ctx, d, g, githubapi.CheckRun{HeadSHA: sha, ExternalID: githubapi.CheckRunExternalID(rep.Key, sha, g.Run),
		Title: render.ReviewHeadline(rep), Summary: summary.String(), Annotations: annotations(g, rep)}, rep.Failed())
}

// postCheckRun completes run (its name, link and conclusion filled in from g and failed) on
// its head, the comment marker taken off its summary: the check run is not where the deploy
// looks for reviews. A token that cannot write checks (a fork's, or one without checks: write)
// leaves the verdict to the job's exit code, with a notice; GitHub trouble is a warning, since
// the exit code carries the verdict anyway. When the check run could not be created and an
// earlier run's check run on the commit was made to carry this verdict instead, a warning says
// which; when even that failed, an error says the commit may show an earlier verdict (the job
// still fails when this verdict does).
func postCheckRun(ctx context.Context, d Deps, g Gate, run githubapi.CheckRun, failed bool) {
	run.Name, run.DetailsURL, run.Conclusion = cmp.Or(g.CheckName, DefaultCheckName), g.RunURL, "success"
	if failed {
		run.Conclusion = "failure"
	}
	if i := strings.IndexByte(run.Summary, '\n'); strings.HasPrefix(run.Summary, render.MarkerPrefix) && i >= 0 {
		run.Summary = run.Summary[i+1:]
	}
	url, err := d.GitHub.CompleteCheckRun(ctx, run)
	var notCreated *githubapi.NotCreatedError
	switch {
	case errors.As(err, &notCreated) && notCreated.Update != nil:
		d.Runner.Error("cdkbot: %v; the verdict is this job's exit code", err)
	case errors.As(err, &notCreated) && url != "":
		d.Runner.Warning("cdkbot: check run %s: %s (%s): %v", run.Name, run.Conclusion, url, err)
	case githubapi.CannotWrite(err):
		d.Runner.Notice("cdkbot: the token cannot create check runs (it needs `checks: write`; " +
			"a fork's token never has it), so the verdict is this job's exit code")
	case err != nil:
		d.Runner.Warning("cdkbot: could not create the %s check run: %v; the verdict is this job's exit code",
			run.Name, err)
	default:
		d.Runner.Notice("cdkbot: check run %s: %s (%s)", run.Name, run.Conclusion, url)
	}
}

// annotations point the failing gates, the approved ones and policy errors at the app.
func annotations(g Gate, rep *review.Report) []githubapi.Annotation {
	path := g.AnnotationPath
	if path == "" {
		path = "cdk.json"
	}
	var out []githubapi.Annotation
	total := 0
	for _, gate := range rep.Gates {
		if gate.Failing() || gate.Overridden {
			total += len(gate.Items)
		}
	}
	for _, gate := range rep.Gates {
		level := ""
		switch {
		case gate.Failing():
			level = "failure"
		case gate.Overridden:
			level = "warning"
		}
		if level == "" {
			continue
		}
		// What CloudFormation refuses says how to go ahead (the comment says it once, above the items).
		advice := ""
		if !review.Approvable(gate.Name) {
			advice = "\n" + render.GateAdvice(gate.Name)
		}
		for _, item := range gate.Items {
			// The items are the app's to multiply (thousands of validation errors): past the
			// fan-in's bound, one annotation says how many more there are and where.
			if len(out) == maxFanInAnnotations-1 && total > maxFanInAnnotations {
				return append(out, githubapi.Annotation{Path: path, StartLine: 1, Level: level,
					Title: "cdkbot gates", Message: fmt.Sprintf("%d more gate items: the job summary "+
						"and the report file list them", total-len(out))})
			}
			out = append(out, githubapi.Annotation{Path: path, StartLine: 1,
				Level: level, Title: "cdkbot gate " + gate.Name, Message: render.Clean(item) + advice})
		}
	}
	return out
}

// ReviewCommand answers `/cdkbot review` in a pull request's comments: the pull request is read
// from the API and reviewed as on pull_request_target (its code is never run there).
func ReviewCommand(ctx context.Context, d Deps, body string, number int, in PullRequestReview) error {
	if !strings.HasPrefix(strings.TrimSpace(body), "/cdkbot review") {
		d.Runner.Notice("cdkbot: the comment is not `/cdkbot review` on a pull request; nothing to do")
		return nil
	}
	pr, err := d.GitHub.PullRequest(ctx, number)
	if err != nil {
		return err
	}
	in.PR = pr.Facts
	if pr.Mergeable == nil || !*pr.Mergeable {
		in.PR.MergeCommitSHA = "" // GitHub's test merge commit is stale or absent
	}
	in.Event = "issue_comment"
	return ReviewPullRequest(ctx, d, in)
}

// MergeGroupReview is one merge queue check.
type MergeGroupReview struct {
	Action           string // checks_requested
	BaseSHA, HeadSHA string
	HeadRef          string // refs/heads/gh-readonly-queue/main/pr-104-<sha>
	Key              string
	Gate             Gate
}

var queuePR = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/pr-(\d+)-[0-9a-f]+$`) })

// ReviewMergeGroup gates a merge queue: the queue's head (the base plus the queued pull
// requests) against its base, enforced through the check run and the exit code, reported in
// the job summary; no comment. Approvals are those of the pull request the queue entry is for.
func ReviewMergeGroup(ctx context.Context, d Deps, in MergeGroupReview) error {
	if in.Action != "checks_requested" {
		d.Runner.Notice("cdkbot: merge_group %q: nothing to check", in.Action)
		return nil
	}
	req := ReviewRequest{Base: in.BaseSHA, Head: in.HeadSHA, HeadSHA: in.HeadSHA, Key: in.Key}
	if m := queuePR().FindStringSubmatch(in.HeadRef); m != nil {
		n, _ := strconv.Atoi(m[1])
		pr, err := d.GitHub.PullRequest(ctx, n)
		if err != nil {
			req.Notes = append(req.Notes, fmt.Sprintf(
				"cdkbot could not read pull request #%d of this queue entry (%v), so no approval counts", n, err))
		} else {
			var ignored []string
			req.Approvals, ignored, _ = boundApprovals(ctx, d.GitHub, in.Gate.Approval, in.Gate.label(), in.Key,
				pr.Facts)
			req.Notes = append(req.Notes, ignored...)
		}
	}
	rep, err := d.Reviewer.Review(ctx, req)
	if err != nil {
		return err
	}
	var full bytes.Buffer
	links := in.Gate.links()
	links.Command = false // a merge queue entry is not reviewed on command
	if err := render.ReviewComment(&full, rep, render.CommentView{Budget: SummaryLimit, Links: links}); err != nil {
		return err
	}
	d.Runner.Summary(full.String())
	c := render.DiffReport{Stacks: rep.Stacks}.Count()
	d.Runner.Output("has-changes", strconv.FormatBool(c.StacksChanged > 0))
	d.Runner.Output("replacements", strconv.Itoa(c.Replace+c.MayReplace))
	d.Runner.Output("destroys", strconv.Itoa(c.Destroy))
	d.Runner.Output("security-broadening", strconv.FormatBool(c.Broadened))
	checkRun(ctx, d, in.Gate, rep, in.HeadSHA)
	return verdict(d.Runner, rep)
}

// PostSavedReport posts the review a fork's pull request left as a report file, from a trusted
// workflow_run job whose token can write. The file is data the fork's author controlled: it is
// posted only on the pull request of the run that triggered this job, for that run's head
// commit, and the comment is re-rendered from its structured review (never its Markdown), with a
// marker flagged unverified, so the deploy flow does not count it as reviewed.
func PostSavedReport(ctx context.Context, d Deps, r SavedReport, run ghaction.WorkflowRun) error {
	number := 0
	for _, pr := range run.PullRequests {
		if pr.HeadSHA == run.HeadSHA {
			number = pr.Number
		}
	}
	if number == 0 && run.HeadOwner != "" && run.HeadBranch != "" {
		// GitHub names no pull request on runs from forks: find it by its head.
		prs, err := d.GitHub.OpenPullRequestsFor(ctx, run.HeadOwner, run.HeadBranch)
		if err != nil {
			return err
		}
		for _, pr := range prs {
			if pr.HeadSHA == run.HeadSHA {
				number = pr.Number
			}
		}
	}
	switch {
	case number == 0:
		return failure.Inputf("no open pull request has the triggering run's head %s: nothing posted",
			commitid.Short(run.HeadSHA, commitid.GitHub))
	case r.PullRequest != number:
		return failure.Inputf("the report names pull request #%d, but the triggering run is of #%d: nothing posted",
			r.PullRequest, number)
	}
	if m, ok := render.ParseMarker(r.Comment); !ok || m.HeadSHA != run.HeadSHA {
		return failure.Inputf("the report is not of the triggering run's head %s: nothing posted",
			commitid.Short(run.HeadSHA, commitid.GitHub))
	}
	key := r.Key
	if len(key) > 200 || strings.ContainsAny(key, "\n\r<>") {
		return failure.Inputf("the report's key is not one cdkbot writes: nothing posted")
	}
	var body bytes.Buffer
	if err := render.ForkReviewMarkdown(&body, r.Review, key, run.HeadSHA, render.GitHubCommentLimit-1024); err != nil {
		return failure.InputErr(err)
	}
	res, err := d.GitHub.UpsertComment(ctx, number, body.String(), func(b string) bool {
		k, ok := render.MarkerKey(b)
		return ok && k == key
	})
	if err != nil {
		return err
	}
	d.Runner.Notice("cdkbot: review comment %s on #%d (%s), re-rendered from the fork's report",
		res.Action, number, res.URL)
	return nil
}
