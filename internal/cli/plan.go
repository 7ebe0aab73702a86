package cli

import (
	"context"
	"encoding/json"
	"os"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/publishplan"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// planOptions are the inputs of `cdkbot plan`.
type planOptions struct {
	Dir                    string
	Stacks, Exclude, Waves []string
	Format                 string
	Account, Region        string
	Config                 string
	Policy                 *aspects.Config // its aspects' mutated templates are what deploys
}

func newPlanCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json", "github-matrix"}}
	o := planOptions{}
	cmd := &cobra.Command{
		Use:   "plan ASSEMBLY",
		Short: "Show the publish and deploy work of an assembly, or print it as GitHub Actions matrices",
		Long: "plan prints what `cdkbot deploy` would do, without AWS: the assets to publish, then the stacks in\n" +
			"stages (a stage's stacks depend only on earlier stages, so they can deploy in parallel).\n" +
			"--format github-matrix prints one line of JSON for $GITHUB_OUTPUT: {\"assets\": matrix, \"stages\":\n" +
			"[matrix, ...], \"stageCount\": N}, for workflows that run one job per asset (`cdkbot publish\n" +
			"ASSEMBLY ${{ matrix.asset }}`) and then one job per stack per stage (`cdkbot deploy ASSEMBLY\n" +
			"--stacks ${{ matrix.stack }} --no-deps --no-publish`); see the README.\n" +
			"Environment-agnostic stacks resolve to --account/--region (default: AWS_REGION, and a placeholder).",
		Args: exactArgs(1, "one argument, the cloud assembly directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir, o.Format = args[0], f.value
			set, policy, err := deploySettings(o.Config, cmd.Flags().Changed("config"))
			if err != nil {
				return err
			}
			o.Policy = policy
			if !cmd.Flags().Changed("wave") && len(set.Waves) > 0 {
				o.Waves = set.Waves
			}
			return runPlan(cmd.Context(), streams, o)
		},
	}
	cmd.Flags().StringSliceVar(&o.Stacks, "stacks", nil, "only stacks matching these globs, and what they depend on")
	cmd.Flags().StringSliceVar(&o.Exclude, "exclude", nil, "leave out stacks matching these globs")
	cmd.Flags().StringSliceVar(&o.Waves, "wave", DefaultWaves, "stacks matching each glob deploy first, wave by wave")
	cmd.Flags().StringVar(&o.Account, "account", "", "account of environment-agnostic stacks (default: a placeholder)")
	cmd.Flags().StringVar(&o.Region, "region", os.Getenv("AWS_REGION"), "region of environment-agnostic stacks")
	cmd.Flags().Var(f, "format", "output format: text, json or github-matrix")
	cmd.Flags().StringVar(&o.Config, "config", ".cdkbot.yml", "configuration whose deploy section sets the waves (--wave wins)")
	return cmd
}

func runPlan(_ context.Context, streams IO, o planOptions) error {
	a, err := loadAssembly(o.Dir)
	if err != nil {
		return err
	}
	account, region := o.Account, o.Region
	if account == "" {
		account = "CURRENT_ACCOUNT"
	}
	if region == "" {
		region = "CURRENT_REGION"
	}
	pp, err := publishplan.Build(a, publishplan.Options{DefaultAccount: account, DefaultRegion: region, ToolkitBucket: "TOOLKIT_BUCKET"})
	if err != nil {
		return &inputError{err}
	}
	mutated, err := review.MutatedTemplates(a, o.Policy, nil)
	if err != nil {
		return &inputError{err}
	}
	plan, err := deployplan.Build(a, deployplan.Options{DefaultAccount: account, DefaultRegion: region, Stacks: o.Stacks, Exclude: o.Exclude,
		Waves: o.Waves, ToolkitBucket: "TOOLKIT_BUCKET", Parameters: pp.Parameters, Templates: mutated})
	if err != nil {
		return &inputError{err}
	}
	sub := assetsOf(plan, pp)
	switch o.Format {
	case "github-matrix":
		return render.PlanGitHubMatrix(streams.Out, plan, sub)
	case "json":
		enc := json.NewEncoder(streams.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"publish": sub, "deploy": plan})
	}
	return render.PlanText(streams.Out, plan, sub)
}
