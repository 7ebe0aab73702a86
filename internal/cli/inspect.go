package cli

import (
	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

// inspectOptions are the inputs of `cdkbot inspect`.
type inspectOptions struct {
	Dir    string
	Format string
}

func newInspectCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	cmd := &cobra.Command{
		Use:   "inspect DIR",
		Short: "Read a cloud assembly (cdk.out), validate it, and print its stacks, assets and versions",
		Long: "inspect loads a cloud assembly written by any CDK framework version, validates it against the\n" +
			"cloud assembly schema and cdkbot's safety rules, and prints what it holds. --format json is a\n" +
			"stable, documented shape for scripts (see README).",
		Args: exactArgs(1, "one argument, the cloud assembly directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInspect(streams, inspectOptions{Dir: args[0], Format: f.value})
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	return cmd
}

func runInspect(streams IO, opts inspectOptions) error {
	a, err := pipeline.LoadAssembly(opts.Dir)
	if err != nil {
		return err
	}
	in := render.NewInspection(a, opts.Dir)
	if opts.Format == "json" {
		return render.InspectionJSON(streams.Out, in)
	}
	return render.InspectionText(streams.Out, in)
}
