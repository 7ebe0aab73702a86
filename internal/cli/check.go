package cli

import (
	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

// checkOptions are the inputs of `cdkbot check`.
type checkOptions struct {
	Assembly        string
	Config          string
	NoStabilization bool
	Format          string
	Write           string
}

func newCheckCommand(streams IO) *cobra.Command {
	opts := checkOptions{}
	f := &format{value: "text", allowed: []string{"text", "markdown", "json"}}
	cmd := &cobra.Command{
		Use:   "check ASSEMBLY",
		Short: "Run the configured policy aspects (.cdkbot.yml) over an assembly: checks and mutations",
		Long: "check rebuilds the construct tree from tree.json and the templates and applies the aspects of the\n" +
			"configuration in priority order (mutating 200, default 600, read-only 1000), repeating passes until\n" +
			"the tree stops changing. Exit code 1 when an unsuppressed error-level violation remains. --write DIR\n" +
			"writes a copy of the assembly with the mutated templates.",
		Args: exactArgs(1, "one argument, the cloud assembly directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Assembly, opts.Format = args[0], f.value
			return runCheck(streams, opts, cmd.Flags().Changed("config"))
		},
	}
	cmd.Flags().Var(f, "format", "output format: text, markdown or json")
	cmd.Flags().StringVar(&opts.Config, "config", ".cdkbot.yml", "the policy configuration")
	cmd.Flags().BoolVar(&opts.NoStabilization, "no-stabilization", false,
		"one pass only (the legacy behaviour: aspects added or nodes created by aspects may be missed)")
	cmd.Flags().StringVar(&opts.Write, "write", "", "write the assembly with mutated templates to this new directory")
	return cmd
}

func runCheck(streams IO, opts checkOptions, configGiven bool) error {
	rep, err := pipeline.Check(pipeline.CheckOptions{
		Assembly: opts.Assembly, Config: opts.Config, ConfigRequired: configGiven,
		ConfigCheckout:  configCheckout(configGiven),
		NoStabilization: opts.NoStabilization, Write: opts.Write, Log: streams.Err,
	})
	if err != nil {
		return err
	}
	switch opts.Format {
	case "json":
		err = render.PolicyJSON(streams.Out, rep)
	case "markdown":
		err = render.PolicyMarkdown(streams.Out, rep)
	default:
		err = render.PolicyText(streams.Out, rep)
	}
	if err != nil {
		return err
	}
	if rep.Failed() {
		return failure.Blocked
	}
	return nil
}
