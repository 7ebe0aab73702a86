package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/deploy"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// deployOptions are the inputs of `cdkbot deploy`.
type deployOptions struct {
	Dir             string
	Stacks, Exclude []string
	NoDeps          bool
	Format          string
	Toolkit         toolkitFlags
	Revision        string
}

func newDeployCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	o := deployOptions{}
	cmd := &cobra.Command{
		Use:   "deploy ASSEMBLY",
		Short: "Deploy the stacks of a cloud assembly with CloudFormation change sets, in dependency order",
		Long: "deploy deploys every stack of the assembly (or those selected with --stacks, plus what they depend\n" +
			"on unless --no-deps) to its environment: it assumes the stack's deploy role, checks the environment's\n" +
			"bootstrap version, skips stacks whose deployed template and parameters are unchanged, and otherwise\n" +
			"creates and executes a change set with the CloudFormation execution role, following its events.\n" +
			"A failed stack skips the stacks that depend on it. Publish the assets first: `cdkbot publish`.",
		Args: exactArgs(1, "one argument, the cloud assembly directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir, o.Format = args[0], f.value
			return runDeploy(cmd.Context(), streams, o)
		},
	}
	cmd.Flags().StringSliceVar(&o.Stacks, "stacks", nil, "deploy only stacks matching these globs (id, display name or stack name)")
	cmd.Flags().StringSliceVar(&o.Exclude, "exclude", nil, "leave out stacks matching these globs")
	cmd.Flags().BoolVar(&o.NoDeps, "no-deps", false, "deploy exactly the selection, not the stacks it depends on")
	cmd.Flags().Var(f, "format", "output format: text or json")
	o.Toolkit.add(cmd)
	cmd.Flags().StringVar(&o.Revision, "revision", "", "the commit being deployed; names the change sets")
	return cmd
}

func runDeploy(ctx context.Context, streams IO, o deployOptions) error {
	a, err := loadAssembly(o.Dir)
	if err != nil {
		return err
	}
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		return &operationError{err}
	}
	opts := deployplan.Options{DefaultRegion: cfg.Region, Stacks: o.Stacks, Exclude: o.Exclude, NoDeps: o.NoDeps,
		ToolkitBucket: o.Toolkit.Bucket, Revision: o.Revision}
	for _, s := range a.AllStacks() {
		if !s.Environment.AccountKnown() {
			id, err := awsconfig.WhoAmI(ctx, cfg)
			if err != nil {
				return &operationError{err}
			}
			opts.DefaultAccount = id.Account
			break
		}
	}
	if hasLegacyFileAssets(a) {
		// Legacy stacks take their assets' locations as parameters, the same the publish step used.
		if opts.ToolkitBucket, err = o.Toolkit.bucket(ctx, cfg); err != nil {
			return &operationError{err}
		}
		pp, err := publishplan.Build(a, publishplan.Options{DefaultAccount: opts.DefaultAccount, DefaultRegion: opts.DefaultRegion,
			ToolkitBucket: opts.ToolkitBucket})
		if err != nil {
			return &inputError{err}
		}
		opts.Parameters = pp.Parameters
	}
	plan, err := deployplan.Build(a, opts)
	if err != nil {
		return &inputError{err}
	}
	d := &deploy.Deployer{Sessions: awsconfig.NewSessions(cfg, awsconfig.Options{SessionName: "cdkbot-deploy"}),
		ReadTemplate: a.ReadFile,
		Events: func(e deploy.Event) {
			line := fmt.Sprintf("cdkbot: %s | %s %s %s", e.Stack, e.Status, e.ResourceType, e.LogicalID)
			if e.Reason != "" {
				line += ": " + e.Reason
			}
			fmt.Fprintln(streams.Err, line)
		}}
	outcomes, err := d.Run(ctx, plan)
	if o.Format == "json" {
		enc := json.NewEncoder(streams.Out)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(map[string]any{"stacks": outcomes}); jerr != nil {
			return &operationError{jerr}
		}
	} else {
		for _, oc := range outcomes {
			line := fmt.Sprintf("  %-10s %s", oc.Result, oc.Stack)
			if oc.Status != "" {
				line += "  " + oc.Status
			}
			if oc.Duration > 0 {
				line += fmt.Sprintf("  (%s)", oc.Duration.Round(100*time.Millisecond))
			}
			fmt.Fprintln(streams.Out, line)
			for _, c := range oc.Causes {
				fmt.Fprintln(streams.Out, "      "+c)
			}
		}
	}
	if err != nil {
		return &operationError{err}
	}
	return nil
}
