package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/go-github/v60/github"
	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// summaryLimit is GitHub's job summary size limit.
const summaryLimit = 1 << 20

// commentBudgets are tried in turn until GitHub accepts the comment.
var commentBudgets = []int{render.GitHubCommentLimit - 1024, 32 << 10, 16 << 10, 8 << 10}

// savedReport is the report file: what was reviewed and the comment, so a trusted workflow can
// post it for a fork's pull request.
type savedReport struct {
	PullRequest int             `json:"pullRequest"`
	Key         string          `json:"key"`
	Comment     string          `json:"comment"`
	Failed      bool            `json:"failed"`
	Review      json.RawMessage `json:"review"`
}

func newActionCommand(streams IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "action",
		Short: "Run as the GitHub Action: review pull requests, deploy merges (inputs and event from the Actions environment)",
		Args:  exactArgs(0, "no arguments (inputs come from the workflow)"),
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

func runAction(ctx context.Context, streams IO) error {
	rt, err := ghaction.New(os.Getenv, streams.Out)
	if err != nil {
		return usagef("%v", err)
	}
	rt.Mask(rt.Input("github-token"))
	switch ev := rt.EventName(); ev {
	case "pull_request", "pull_request_target":
		return reviewPullRequest(ctx, streams, rt)
	case "issue_comment":
		body, number, ok := rt.IssueComment()
		if !ok || !strings.HasPrefix(strings.TrimSpace(body), "/cdkbot review") {
			rt.Notice("cdkbot: the comment is not `/cdkbot review` on a pull request; nothing to do")
			return nil
		}
		client, err := newGitHub(rt)
		if err != nil {
			return err
		}
		pr, err := client.PullRequest(ctx, number)
		if err != nil {
			return &operationError{err}
		}
		rt.SetPullRequest(&ghaction.PullRequest{Number: pr.Number, HeadSHA: pr.HeadSHA, BaseSHA: pr.BaseSHA, Labels: pr.Labels, Fork: pr.Fork})
		return reviewPullRequest(ctx, streams, rt)
	case "push":
		return deployOnMerge(ctx, streams, rt)
	default:
		rt.Notice("cdkbot: nothing to do for the %q event (cdkbot reviews pull_request and pull_request_target, and deploys on push to the default branch)", ev)
		return nil
	}
}

func reviewPullRequest(ctx context.Context, streams IO, rt *ghaction.Runtime) error {
	pr, ok := rt.PullRequest()
	if !ok {
		return usagef("the %s event has no pull_request payload", rt.EventName())
	}
	workdir := rt.Input("working-directory")
	if workdir == "" {
		workdir = "."
	}
	in := func(name string) string {
		v := rt.Input(name)
		if v != "" && !filepath.IsAbs(v) {
			v = filepath.Join(workdir, v)
		}
		return v
	}
	opts := reviewOptions{BaseAssembly: in("base-assembly"), HeadAssembly: in("head-assembly"), Config: in("config"), Repo: workdir,
		OverrideLabel: rt.Input("override-label"), Labels: pr.Labels, Key: rt.Key(workdir), HeadSHA: pr.HeadSHA, FailOn: review.DefaultFailOn}
	if opts.HeadAssembly == "" {
		// Review the pull request's commits from the checkout, synthesizing each (fetch-depth: 0
		// makes the base commit available). pull_request_target runs with a write token, so pull
		// request code is never executed there: it needs pre-synthesized assemblies.
		opts.Base, opts.Head, opts.AssemblyDir = pr.BaseSHA, pr.HeadSHA, "cdk.out"
		opts.InstallCommand, opts.SynthCommand = rt.Input("install-command"), rt.Input("synth-command")
		opts.NoSynth, opts.Log = rt.EventName() != "pull_request", streams.Out
		if opts.NoSynth {
			rt.Warning("cdkbot: %s runs with a write token, so pull request code is never run; pass base-assembly and head-assembly synthesized by a trusted job", rt.EventName())
		}
	}
	configGiven := opts.Config != ""
	if !configGiven {
		opts.Config = filepath.Join(workdir, ".cdkbot.yml")
	}
	if opts.OverrideLabel == "" {
		opts.OverrideLabel = review.DefaultOverrideLabel
	}
	if st := rt.Input("stacks"); st != "" {
		opts.Stacks = strings.Split(strings.ReplaceAll(st, " ", ""), ",")
	}
	if f := rt.Input("fail-on"); f != "" {
		opts.FailOn = strings.Split(strings.ReplaceAll(f, " ", ""), ",")
	}
	rep, cleanup, err := buildReview(opts, configGiven, true)
	defer cleanup()
	if err != nil {
		return err
	}

	var full, js bytes.Buffer
	if err := render.ReviewMarkdown(&full, rep, summaryLimit); err != nil {
		return err
	}
	rt.Summary(full.String())
	if err := render.ReviewJSON(&js, rep); err != nil {
		return err
	}
	body, err := commentBody(rep, commentBudgets[0])
	if err != nil {
		return err
	}
	reportPath, err := writeReport(savedReport{PullRequest: pr.Number, Key: rep.Key, Comment: body, Failed: rep.Failed(), Review: bytes.TrimSpace(js.Bytes())})
	if err != nil {
		return err
	}
	c := render.DiffReport{Stacks: rep.Stacks}.Count()
	rt.Output("has-changes", strconv.FormatBool(c.StacksChanged > 0))
	rt.Output("replacements", strconv.Itoa(c.Replace+c.MayReplace))
	rt.Output("destroys", strconv.Itoa(c.Destroy))
	rt.Output("security-broadening", strconv.FormatBool(c.Broadened))
	rt.Output("report-file", reportPath)

	switch mode := rt.Input("comment"); {
	case mode == "off":
	case pr.Fork && rt.EventName() == "pull_request":
		rt.Notice("cdkbot: this pull request comes from a fork, whose token cannot comment. The review is in the job summary "+
			"and in %s. To post it: upload that file as an artifact, and in a workflow triggered by workflow_run "+
			"download it and run `cdkbot action comment --report FILE` with a token that can write.", reportPath)
	default:
		if err := postComment(ctx, rt, pr.Number, rep, mode == "new"); err != nil {
			return err
		}
	}
	if rep.Failed() {
		for _, g := range rep.Gates {
			if g.Failing() {
				rt.Error("cdkbot: gate %s blocks this pull request (%d item(s)); add the label %q to approve", g.Name, len(g.Items), rep.OverrideLabel)
			}
		}
		return &verdictError{}
	}
	return nil
}

func commentBody(rep *review.Report, budget int) (string, error) {
	var b bytes.Buffer
	err := render.ReviewMarkdown(&b, rep, budget)
	return b.String(), err
}

// postComment writes the sticky comment, rendering less detail when GitHub rejects the size.
func postComment(ctx context.Context, rt *ghaction.Runtime, number int, rep *review.Report, alwaysNew bool) error {
	client, err := newGitHub(rt)
	if err != nil {
		return err
	}
	ours := func(body string) bool {
		key, ok := render.MarkerKey(body)
		return ok && key == rep.Key && !alwaysNew
	}
	for _, budget := range commentBudgets {
		body, err := commentBody(rep, budget)
		if err != nil {
			return err
		}
		res, err := client.UpsertComment(ctx, number, body, ours)
		switch {
		case errors.Is(err, githubapi.ErrBodyTooLarge):
			continue
		case cannotWrite(err):
			rt.Warning("cdkbot: the token cannot comment on #%d (%v); the review is in the job summary", number, err)
			return nil
		case err != nil:
			return &operationError{err}
		}
		rt.Notice("cdkbot: review comment %s (%s)", res.Action, res.URL)
		return nil
	}
	return &operationError{fmt.Errorf("GitHub rejected the review comment even at %d bytes", commentBudgets[len(commentBudgets)-1])}
}

func cannotWrite(err error) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && (ge.Response.StatusCode == 403 || ge.Response.StatusCode == 404)
}

func newGitHub(rt *ghaction.Runtime) (*githubapi.Client, error) {
	token := rt.Input("github-token")
	if token == "" {
		return nil, usagef("input github-token is empty; pass ${{ github.token }} or a token that can comment")
	}
	owner, repo := rt.Repo()
	login := ""
	if strings.HasPrefix(token, "ghs_") {
		login = "github-actions[bot]" // the Actions token comments as this bot; GET /user cannot tell
	}
	return githubapi.New(githubapi.Options{Token: token, APIURL: rt.APIURL(), GraphQLURL: rt.GraphQLURL(), Owner: owner, Repo: repo, Login: login})
}

func writeReport(r savedReport) (string, error) {
	dir := os.Getenv("RUNNER_TEMP")
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, "cdkbot-report.json")
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
	var r savedReport
	if err := json.Unmarshal(raw, &r); err != nil || r.PullRequest == 0 || !strings.HasPrefix(r.Comment, render.MarkerPrefix) {
		return &inputError{fmt.Errorf("%s is not a cdkbot report file", path)}
	}
	rt, err := ghaction.New(os.Getenv, streams.Out)
	if err != nil {
		return usagef("%v", err)
	}
	rt.Mask(rt.Input("github-token"))
	client, err := newGitHub(rt)
	if err != nil {
		return err
	}
	res, err := client.UpsertComment(ctx, r.PullRequest, r.Comment, func(body string) bool {
		key, ok := render.MarkerKey(body)
		return ok && key == r.Key
	})
	if err != nil {
		return &operationError{err}
	}
	rt.Notice("cdkbot: review comment %s on #%d (%s)", res.Action, r.PullRequest, res.URL)
	return nil
}
