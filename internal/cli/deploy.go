package cli

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

// deployFlags are `cdkbot deploy`'s flags that are not the pipeline's options.
type deployFlags struct {
	Dir, Format, Config string
}

func newDeployCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	approval := &format{value: "never", allowed: []string{"never", "broadening"}, typ: "string"}
	o := pipeline.DeployOptions{}
	flags := deployFlags{}
	cmd := &cobra.Command{
		Use: "deploy ASSEMBLY",
		Short: "Publish the assets and deploy the stacks of a cloud assembly with CloudFormation change sets, " +
			"in dependency order",
		Long: "deploy deploys every stack of the assembly (or those selected with --stacks, plus what they depend\n" +
			"on unless --no-deps), each right after publishing its assets (as `cdkbot publish` does; --no-publish\n" +
			"when a previous step did), to its environment: it assumes the stack's deploy role, checks\n" +
			"the environment's bootstrap version, skips stacks whose deployed template and parameters are\n" +
			"unchanged, and otherwise creates and executes a change set with the CloudFormation execution role,\n" +
			"following its events. Independent stacks deploy in parallel (--concurrency); stacks matching a\n" +
			"--wave glob deploy before the rest, wave by wave. A failed stack skips the stacks that depend on it\n" +
			"and later waves; independent stacks still finish.",
		Args: exactArgs(1, "one argument, the cloud assembly directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir, flags.Format, o.RequireApproval = args[0], f.value, approval.value
			named := cmd.Flags().Changed("config")
			set, policy, err := pipeline.LoadDeploySettings(flags.Config, configCheckout(named), named)
			if err != nil {
				return err
			}
			o.Policy = policy
			if !cmd.Flags().Changed("wave") && len(set.Waves) > 0 {
				o.Waves = set.Waves
			}
			if !cmd.Flags().Changed("concurrency") && set.Concurrency > 0 {
				o.Concurrency = set.Concurrency
			}
			if !cmd.Flags().Changed("require-approval") && set.RequireApproval != "" {
				o.RequireApproval = set.RequireApproval
			}
			if o.Concurrency < 1 {
				return failure.Usagef("--concurrency must be at least 1")
			}
			return runDeploy(cmd.Context(), streams, o, flags.Format)
		},
	}
	cmd.Flags().StringSliceVar(&o.Stacks, "stacks", nil,
		"deploy only stacks matching these globs (id, display name or stack name)")
	cmd.Flags().StringSliceVar(&o.Exclude, "exclude", nil, "leave out stacks matching these globs")
	cmd.Flags().BoolVar(&o.NoDeps, "no-deps", false, "deploy exactly the selection, not the stacks it depends on")
	cmd.Flags().IntVar(&o.Concurrency, "concurrency", 4, "stacks deployed at once")
	cmd.Flags().StringVar(&o.OutputsFile, "outputs-file", "",
		"write the stacks' outputs to this JSON file ({\"StackName\": {\"Key\": \"value\"}})")
	cmd.Flags().Var(approval, "require-approval",
		"never, or broadening: refuse a stack whose change grants IAM or network permissions")
	cmd.Flags().StringSliceVar(&o.Waves, "wave", pipeline.DefaultWaves,
		"stacks matching each glob deploy first, wave by wave (repeat the flag for more waves)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", time.Hour,
		"give up on a stack that has not finished deploying after this long")
	cmd.Flags().BoolVar(&o.NoPublish, "no-publish", false, "do not publish assets (an earlier step ran cdkbot publish)")
	cmd.Flags().BoolVar(&o.AllowExecutables, "allow-executables", false,
		"run the commands of assets built by an executable (trusted revisions only)")
	cmd.Flags().Var(f, "format", "output format: text or json")
	cmd.Flags().StringVar(&flags.Config, "config", ".cdkbot.yml",
		"configuration whose deploy section sets waves, concurrency and require-approval (flags win)")
	addToolkitFlags(cmd, &o.ToolkitBucket, &o.ToolkitStack)
	cmd.Flags().StringVar(&o.Revision, "revision", "", "the commit being deployed; names the change sets")
	return cmd
}

func runDeploy(ctx context.Context, streams IO, o pipeline.DeployOptions, format string) error {
	a, err := pipeline.LoadAssembly(o.Dir)
	if err != nil {
		return err
	}
	var gha *ghaction.Runtime
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		gha, _ = ghaction.New(os.Getenv, streams.Err)
	}
	o.BuildOutput = streams.Err
	o.View = func(p *deployplan.Plan) pipeline.DeployView { return newDeployView(streams.Err, p, gha) }
	rep, err := pipeline.Deploy(ctx, a, o)
	var rerr error
	if rep != nil {
		if format == "json" {
			rerr = render.DeploySummaryJSON(streams.Out, *rep)
		} else {
			rerr = render.DeploySummaryText(streams.Out, *rep)
		}
	}
	if err != nil {
		return err
	}
	return rerr
}
