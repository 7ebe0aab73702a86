package cli

import (
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

// diffOptions are the inputs of `cdkbot diff`.
type diffOptions struct {
	Old, New     string
	Format       string
	Stacks       []string
	Fail         bool
	ShowMetadata bool
	NoColor      bool
}

func newDiffCommand(streams IO) *cobra.Command {
	opts := diffOptions{}
	f := &format{value: "text", allowed: []string{"text", "markdown", "json"}}
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Show what CloudFormation will do: create, update, replace, destroy, orphan, and permission changes",
		Long: "diff compares two CloudFormation templates (.json or .yaml) or two cloud assemblies (cdk.out\n" +
			"directories, nested Stages and nested stacks included). Stacks are matched by artifact id, then by\n" +
			"stack name. Replacement is followed through every reference to a fixed point.",
		Example: "  cdkbot diff base/cdk.out cdk.out\n" +
			"  cdkbot diff old.template.json new.template.yaml --format markdown\n" +
			"  cdkbot diff base/cdk.out cdk.out --stacks 'Prod/*' --fail",
		Args: exactArgs(2, "two arguments, OLD and NEW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Old, opts.New, opts.Format = args[0], args[1], f.value
			return runDiff(streams, opts)
		},
	}
	cmd.Flags().Var(f, "format", "output format: text, markdown or json")
	cmd.Flags().StringSliceVar(&opts.Stacks, "stacks", nil,
		"only stacks whose id, display name or stack name matches this glob (repeatable)")
	cmd.Flags().BoolVar(&opts.Fail, "fail", false, "exit with code 1 when there are differences")
	cmd.Flags().BoolVar(&opts.ShowMetadata, "show-metadata", false, "show resources whose only change is their Metadata")
	cmd.Flags().BoolVar(&opts.NoColor, "no-color", false, "no colours in text output (also: NO_COLOR)")
	return cmd
}

func runDiff(streams IO, opts diffOptions) error {
	view := render.DiffOptions{ShowMetadata: opts.ShowMetadata, Color: !opts.NoColor && colorWanted(streams.Out)}
	changed, err := pipeline.DiffTo(streams.Out, opts.Old, opts.New, opts.Stacks,
		pipeline.DiffView{Format: opts.Format, Options: view})
	if err != nil {
		return err
	}
	if opts.Fail && changed {
		return failure.Blocked
	}
	return nil
}

// colorWanted is true when w is a terminal and the user did not opt out with NO_COLOR.
func colorWanted(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
