package cli

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

// planFlags are `cdkbot plan`'s flags that are not the pipeline's options.
type planFlags struct {
	Dir, Format, Config string
}

func newPlanCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json", "github-matrix"}}
	o := pipeline.PlanOptions{}
	flags := planFlags{}
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
			flags.Dir, flags.Format = args[0], f.value
			named := cmd.Flags().Changed("config")
			set, policy, err := pipeline.LoadDeploySettings(flags.Config, configCheckout(named), named)
			if err != nil {
				return err
			}
			o.Policy = policy
			if !cmd.Flags().Changed("wave") && len(set.Waves) > 0 {
				o.Waves = set.Waves
			}
			return runPlan(streams, o, flags)
		},
	}
	cmd.Flags().StringSliceVar(&o.Stacks, "stacks", nil, "only stacks matching these globs, and what they depend on")
	cmd.Flags().StringSliceVar(&o.Exclude, "exclude", nil, "leave out stacks matching these globs")
	cmd.Flags().StringSliceVar(&o.Waves, "wave", pipeline.DefaultWaves,
		"stacks matching each glob deploy first, wave by wave")
	cmd.Flags().StringVar(&o.Account, "account", "", "account of environment-agnostic stacks (default: a placeholder)")
	cmd.Flags().StringVar(&o.Region, "region", os.Getenv("AWS_REGION"), "region of environment-agnostic stacks")
	cmd.Flags().Var(f, "format", "output format: text, json or github-matrix")
	cmd.Flags().StringVar(&flags.Config, "config", ".cdkbot.yml",
		"configuration whose deploy section sets the waves (--wave wins)")
	return cmd
}

func runPlan(streams IO, o pipeline.PlanOptions, flags planFlags) error {
	a, err := pipeline.LoadAssembly(flags.Dir)
	if err != nil {
		return err
	}
	plan, assets, err := pipeline.Plan(a, o)
	if err != nil {
		return err
	}
	switch flags.Format {
	case "github-matrix":
		return render.PlanGitHubMatrix(streams.Out, plan, assets)
	case "json":
		return render.PlanJSON(streams.Out, plan, assets)
	}
	return render.PlanText(streams.Out, plan, assets)
}
