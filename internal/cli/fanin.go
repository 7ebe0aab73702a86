package cli

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/action"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

// fanInFlags are `cdkbot fan-in`'s inputs.
type fanInFlags struct {
	plan, reports, headSHA string
	post                   bool
}

func newFanInCommand(streams IO) *cobra.Command {
	var fl fanInFlags
	f := &format{value: "text", allowed: []string{"text", "markdown", "json"}}
	cmd := &cobra.Command{
		Use:   "fan-in --plan FILE --reports DIR [--post]",
		Short: "Combine the reports of a fanned-out review (cdkbot apps) into one review: one comment, one check run",
		Long: "fan-in reads the plan `cdkbot apps` printed (--plan: its json or github-matrix output) and every\n" +
			"cdkbot-report.json below --reports (the legs' report-file outputs, downloaded artifacts), and combines\n" +
			"them: a section per app and environment, touched first, a headline over all. A touched leg without a\n" +
			"report of the head commit (it failed, or never ran) blocks, as a blocked leg does: exit code 1.\n" +
			"The reports are data written where pull request code ran: read bounded, never through a link, and\n" +
			"re-rendered with every string escaped. --post, in GitHub Actions, posts ONE sticky comment on the\n" +
			"event's pull request (keyed by the plan's key) and ONE check run (input check-name).",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runFanIn(cmd.Context(), streams, fl, f.value)
		},
	}
	cmd.Flags().Var(f, "format", "output format without --post: text, markdown or json")
	cmd.Flags().StringVar(&fl.plan, "plan", "", "the output of cdkbot apps (--format json or github-matrix)")
	cmd.Flags().StringVar(&fl.reports, "reports", "", "the directory the legs' report files were downloaded to")
	cmd.Flags().StringVar(&fl.headSHA, "head-sha", "",
		"the commit the legs reviewed, as their comments record it "+
			"(default: the plan's head; with --post, the pull request's)")
	cmd.Flags().BoolVar(&fl.post, "post", false,
		"post the comment and the check run "+
			"(GitHub Actions: the event's pull request; inputs github-token, check-name, comment)")
	return cmd
}

// fanInRequest reads the plan and the legs' report files.
func fanInRequest(fl fanInFlags) (action.FanInRequest, error) {
	if fl.plan == "" || fl.reports == "" {
		return action.FanInRequest{}, failure.Usagef("--plan FILE and --reports DIR are both required")
	}
	raw, err := readReport(fl.plan)
	if err != nil {
		return action.FanInRequest{}, err
	}
	plan, err := render.ParseFanOut(raw)
	if err != nil {
		return action.FanInRequest{}, failure.Inputf("--plan %s: %v", fl.plan, err)
	}
	files, notes, err := pipeline.ReadLegReports(fl.reports)
	if err != nil {
		return action.FanInRequest{}, err
	}
	head := fl.headSHA
	if head == "" {
		head = plan.Head
	}
	return action.FanInRequest{HeadSHA: head, Plan: plan, Files: files, Notes: notes}, nil
}

func runFanIn(ctx context.Context, streams IO, fl fanInFlags, view string) error {
	in, err := fanInRequest(fl)
	if err != nil {
		return err
	}
	if fl.post {
		rt, err := ghaction.New(os.Getenv, streams.Out)
		if err != nil {
			return failure.Usagef("%v", err)
		}
		return postFanIn(ctx, &actionRun{streams: streams, rt: rt, workdir: "."}, in)
	}
	c := action.CombineReports(in)
	switch view {
	case "markdown":
		err = render.FanInMarkdown(streams.Out, c, 0)
	case "json":
		err = render.FanInJSON(streams.Out, c)
	default:
		err = render.FanInText(streams.Out, c)
	}
	if err != nil {
		return err
	}
	if c.Failed() {
		return failure.Blocked
	}
	return nil
}

// postFanIn runs the fan-in flow for the event's pull request: the action's fan-in mode, and
// `cdkbot fan-in --post`.
func postFanIn(ctx context.Context, r *actionRun, in action.FanInRequest) error {
	r.rt.Mask(r.rt.Input("github-token"))
	pr, ok := r.rt.PullRequest()
	if !ok {
		return failure.Usagef("the fan-in posts on a pull request: the %q event has none", r.rt.EventName())
	}
	gh, err := r.github()
	if err != nil {
		return err
	}
	gate, err := r.gate()
	if err != nil {
		return err
	}
	in.PR, in.HeadSHA, in.Comment, in.Gate = pr.Number, pr.HeadSHA, r.rt.Input("comment"), gate
	// A fork's pull_request token cannot write: the summary and the exit code carry the verdict.
	in.ReadOnly = pr.Fork && r.rt.EventName() != "pull_request_target"
	// The legs' reports are as trusted as the comments the legs would have posted only when they
	// come from the pull request's own workflow run: a fork writes its run's artifacts itself.
	in.Verified = !pr.Fork
	return action.FanIn(ctx, action.Deps{GitHub: gh, Runner: cleanRunner{r.rt}}, in)
}
