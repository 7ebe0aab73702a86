package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

// reviewFlags are `cdkbot review`'s view flags; the review's own inputs are the pipeline's.
type reviewFlags struct {
	Format       string
	ShowMetadata bool
	NoColor      bool
}

func newReviewCommand(streams IO) *cobra.Command {
	opts := pipeline.ReviewOptions{}
	view := reviewFlags{}
	f := &format{value: "text", allowed: []string{"text", "markdown", "json"}}
	cmd := &cobra.Command{
		Use:   "review [--repo DIR --base REF --head REF | --head-assembly DIR [--base-assembly DIR]]",
		Short: "Review a change: policy, per-stack diff, compatibility and gates, as the PR comment shows them",
		Long: "review compares the base and head cloud assemblies of a change, applies the policy aspects of --config\n" +
			"to both, and evaluates the gates: exit code 1 when one fails. The assemblies are given as directories\n" +
			"(--head-assembly, --base-assembly; no base is a first deployment) or read from git: the --base and --head\n" +
			"revisions of --repo (default HEAD and its merge base with the default branch), each revision's committed\n" +
			"assembly in --assembly-dir (the log and the review say when the head's was used), or else the revision\n" +
			"synthesized (cdk.json's app). A base that fails to synthesize blocks the review (--base-failure).\n" +
			"--format markdown prints the PR comment exactly as posted.",
		Args: exactArgs(0, "no arguments (name the assemblies with --base-assembly and --head-assembly)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			view.Format, opts.Log, opts.ConfigRequired = f.value, streams.Err, cmd.Flags().Changed("config")
			opts.ConfigCheckout = configCheckout(opts.ConfigRequired)
			opts.ConfigFromHead = !opts.ConfigRequired // reading git: the head revision's .cdkbot.yml
			return runReview(cmd.Context(), streams, opts, view)
		},
	}
	cmd.Flags().Var(f, "format", "output format: text, markdown or json")
	cmd.Flags().StringVar(&opts.BaseAssembly, "base-assembly", "",
		"the assembly of the base (what is deployed); omit for a first deployment")
	cmd.Flags().StringVar(&opts.HeadAssembly, "head-assembly", "",
		"the assembly of the change, instead of reading the revisions from git (--repo)")
	cmd.Flags().StringVar(&opts.Config, "config", ".cdkbot.yml", "the policy configuration")
	cmd.Flags().StringVar(&opts.Repo, "repo", "",
		"the git repository of the change (also read for the pinned aws-cdk CLI and cdk.json)")
	cmd.Flags().StringVar(&opts.Base, "base", "",
		"base revision (default: the merge base of --head with the default branch)")
	cmd.Flags().StringVar(&opts.Head, "head", "", "head revision (with --repo; default HEAD)")
	cmd.Flags().StringVar(&opts.AssemblyDir, "assembly-dir", "cdk.out",
		"where each revision keeps its synthesized assembly, relative to the repository")
	failOn := map[string]string{"fail-on": gatesUsage("gates that fail the review")}
	addSettings(cmd, &opts, pipeline.ReviewSettings, failOn, "fail-on", "override-label")
	cmd.Flags().StringSliceVar(&opts.Labels, "label", nil, "labels on the pull request (repeatable)")
	cmd.Flags().StringVar(&opts.Key, "key", "default", "identifies the comment among several reviews of one PR")
	cmd.Flags().StringVar(&opts.HeadSHA, "head-sha", "", "the commit reviewed, recorded in the comment's marker")
	cmd.Flags().BoolVar(&view.ShowMetadata, "show-metadata", false, "show resources whose only change is their Metadata")
	cmd.Flags().BoolVar(&view.NoColor, "no-color", false, "no colours in text output (also: NO_COLOR)")
	addSettings(cmd, &opts, pipeline.ReviewSettings, nil, "stacks", "install-command", "synth-command", "synth-timeout",
		"synth-inputs", "context", "synth-concurrency", "synth-user", "security-severity", "deployed", "base-failure",
		"asset-changes")
	return cmd
}

func runReview(ctx context.Context, streams IO, opts pipeline.ReviewOptions, view reviewFlags) error {
	// Locally (review, the hook, the demo) the commits are the developer's own: a committed
	// assembly may stand in for synthesizing the head, and the log and the review say so.
	opts.CommittedHead = true
	rep, cleanup, err := pipeline.Review(ctx, opts)
	defer cleanup()
	if err != nil {
		return err
	}
	switch view.Format {
	case "json":
		err = render.ReviewJSON(streams.Out, rep)
	case "markdown":
		err = render.ReviewMarkdown(streams.Out, rep, 0)
	default:
		err = render.ReviewText(streams.Out, rep,
			render.DiffOptions{ShowMetadata: view.ShowMetadata, Color: !view.NoColor && colorWanted(streams.Out)})
	}
	if err != nil {
		return err
	}
	if rep.Failed() {
		return failure.Blocked
	}
	return nil
}
