package cli

import (
	"errors"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// reviewOptions are the inputs of `cdkbot review`.
type reviewOptions struct {
	BaseAssembly, HeadAssembly string
	Config                     string
	Repo                       string
	FailOn                     []string
	OverrideLabel              string
	Labels                     []string
	Key                        string
	HeadSHA                    string
	Format                     string
	ShowMetadata               bool
}

func newReviewCommand(streams IO) *cobra.Command {
	opts := reviewOptions{}
	f := &format{value: "text", allowed: []string{"text", "markdown", "json"}}
	cmd := &cobra.Command{
		Use:   "review --head-assembly DIR [--base-assembly DIR]",
		Short: "Review a change: policy, per-stack diff, compatibility and gates, as the PR comment shows them",
		Long: "review compares the base and head cloud assemblies of a change (pre-synthesized; without a base, as a\n" +
			"first deployment), applies the policy aspects of --config to both, and evaluates the gates: exit code 1\n" +
			"when one fails. --format markdown prints the PR comment exactly as it would be posted.",
		Args: exactArgs(0, "no arguments (name the assemblies with --base-assembly and --head-assembly)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Format = f.value
			return runReview(streams, opts, cmd.Flags().Changed("config"), cmd.Flags().Changed("fail-on"))
		},
	}
	cmd.Flags().Var(f, "format", "output format: text, markdown or json")
	cmd.Flags().StringVar(&opts.BaseAssembly, "base-assembly", "", "the assembly of the base (what is deployed); omit for a first deployment")
	cmd.Flags().StringVar(&opts.HeadAssembly, "head-assembly", "", "the assembly of the change (required)")
	cmd.Flags().StringVar(&opts.Config, "config", ".cdkbot.yml", "the policy configuration")
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "the repository of the change, for the pinned aws-cdk CLI and cdk.json context")
	cmd.Flags().StringSliceVar(&opts.FailOn, "fail-on", review.DefaultFailOn, "gates that fail the review: replace, destroy, orphan, destroy-stateful, security-broadening, compat-fail, policy-error")
	cmd.Flags().StringVar(&opts.OverrideLabel, "override-label", review.DefaultOverrideLabel, "the PR label that turns failing gates into warnings")
	cmd.Flags().StringSliceVar(&opts.Labels, "label", nil, "labels on the pull request (repeatable)")
	cmd.Flags().StringVar(&opts.Key, "key", "default", "identifies the comment among several reviews of one PR")
	cmd.Flags().StringVar(&opts.HeadSHA, "head-sha", "", "the commit reviewed, recorded in the comment's marker")
	cmd.Flags().BoolVar(&opts.ShowMetadata, "show-metadata", false, "show resources whose only change is their Metadata")
	return cmd
}

func runReview(streams IO, opts reviewOptions, configGiven, failOnGiven bool) error {
	if opts.HeadAssembly == "" {
		return usagef("--head-assembly is required (synthesizing from git refs is not available yet)")
	}
	if err := review.ValidateGates(opts.FailOn); err != nil {
		return usagef("--fail-on: %v", err)
	}
	if !failOnGiven {
		opts.FailOn = review.DefaultFailOn
	}
	head, err := loadAssembly(opts.HeadAssembly)
	if err != nil {
		return err
	}
	var base *assembly.Assembly
	if opts.BaseAssembly != "" {
		if base, err = loadAssembly(opts.BaseAssembly); err != nil {
			return err
		}
	}
	var policy *aspects.Config
	raw, err := os.ReadFile(opts.Config)
	switch {
	case err == nil:
		if policy, err = aspects.ParseConfig(opts.Config, raw); err != nil {
			return &inputError{err}
		}
	case errors.Is(err, fs.ErrNotExist) && !configGiven:
	default:
		return usagef("--config %s: %v", opts.Config, err)
	}
	var facts compat.RepoFacts
	if opts.Repo != "" {
		if facts, err = readRepoFacts(opts.Repo); err != nil {
			return err
		}
	}
	rep, err := review.Run(review.Input{Base: base, Head: head, Policy: policy, Repo: facts, ToolSchemaMax: assembly.Schema().MaxMajor,
		FailOn: opts.FailOn, OverrideLabel: opts.OverrideLabel, Labels: opts.Labels, Key: opts.Key, HeadSHA: opts.HeadSHA})
	if err != nil {
		return &inputError{err}
	}
	switch opts.Format {
	case "json":
		err = render.ReviewJSON(streams.Out, rep)
	case "markdown":
		err = render.ReviewMarkdown(streams.Out, rep, 0)
	default:
		err = render.ReviewText(streams.Out, rep, render.DiffOptions{ShowMetadata: opts.ShowMetadata, Color: colorWanted(streams.Out)})
	}
	if err != nil {
		return err
	}
	if rep.Failed() {
		return &verdictError{}
	}
	return nil
}
