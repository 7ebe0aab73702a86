package cli

import (
	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

func newCompatCommand(streams IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compat",
		Short: "Compatibility checks: schema changes and the semver bump they need, version specs, version resolution",
	}
	cmd.AddCommand(newCompatSchemaCommand(streams), newCompatSpecCommand(streams), newCompatResolveCommand(streams),
		newCompatMatrixCommand(streams), newCompatAssemblyCommand(streams))
	return cmd
}

// compatSchemaOptions are the inputs of `cdkbot compat schema`.
type compatSchemaOptions struct {
	pipeline.CompatSchemaOptions
	Format string
}

func newCompatSchemaCommand(streams IO) *cobra.Command {
	opts := compatSchemaOptions{}
	f := &format{value: "text", allowed: []string{"text", "json"}}
	cmd := &cobra.Command{
		Use:   "schema OLD.json NEW.json",
		Short: "List the changes between two JSON Schemas and the semver bump they require",
		Long: "schema compares two JSON Schemas (draft-07) from a reader's point of view: a reader of NEW must\n" +
			"accept every document a writer of OLD produced. With --declared-old and --declared-new it judges\n" +
			"the declared version change and exits 1 when it is too small (under-bumped, no-bump).",
		Args: exactArgs(2, "two arguments, OLD.json and NEW.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Old, opts.New, opts.Format = args[0], args[1], f.value
			return runCompatSchema(streams, opts)
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	cmd.Flags().StringVar(&opts.DeclaredOld, "declared-old", "", "the version the old schema was released as")
	cmd.Flags().StringVar(&opts.DeclaredNew, "declared-new", "", "the version the new schema is released as")
	return cmd
}

func runCompatSchema(streams IO, opts compatSchemaOptions) error {
	res, err := pipeline.CompatSchema(opts.CompatSchemaOptions)
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		err = render.SchemaChangesJSON(streams.Out, res)
	} else {
		err = render.SchemaChangesText(streams.Out, res)
	}
	if err != nil {
		return err
	}
	if res.Failed() {
		return failure.Blocked
	}
	return nil
}

func newCompatSpecCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	cmd := &cobra.Command{
		Use:   "spec SPEC VERSION...",
		Short: "Show which versions satisfy a version spec (>=1.2,<2.0,!=1.5; x; x.y; x.y.z; *)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return failure.Usagef("%s takes a SPEC and at least one VERSION", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := pipeline.CompatSpec(args[0], args[1:])
			if err != nil {
				return err
			}
			if f.value == "json" {
				return render.SpecMatchJSON(streams.Out, m)
			}
			return render.SpecMatchText(streams.Out, m)
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	return cmd
}

func newCompatResolveCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	cmd := &cobra.Command{
		Use:   "resolve WANTED AVAILABLE...",
		Short: "Pick the best available match for a wanted version: exact, else same minor, else same major",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return failure.Usagef("%s takes a WANTED version and at least one AVAILABLE version", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := pipeline.CompatResolve(args[0], args[1:])
			if err != nil {
				return err
			}
			if f.value == "json" {
				err = render.ResolutionJSON(streams.Out, r)
			} else {
				err = render.ResolutionText(streams.Out, streams.Err, r)
			}
			if err != nil {
				return err
			}
			if r.Failed() {
				return failure.Blocked
			}
			return nil
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	return cmd
}

func newCompatMatrixCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Print the CLI × framework × bootstrap × app compatibility matrix with the outcome of each combination",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows := pipeline.CompatMatrix()
			if f.value == "json" {
				return render.CompatMatrixJSON(streams.Out, rows)
			}
			return render.CompatMatrixText(streams.Out, rows)
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	return cmd
}

// compatAssemblyOptions are the inputs of `cdkbot compat assembly`.
type compatAssemblyOptions struct {
	pipeline.CompatAssemblyOptions
	Format string
}

func newCompatAssemblyCommand(streams IO) *cobra.Command {
	opts := compatAssemblyOptions{}
	f := &format{value: "text", allowed: []string{"text", "markdown", "json"}}
	cmd := &cobra.Command{
		Use:   "assembly BASE HEAD",
		Short: "Check a change between two assemblies: toolkit, CLI, bootstrap, deployment mode, framework, feature flags",
		Long: "assembly compares the base and head cloud assemblies of a change, with what the repository pins\n" +
			"(--repo: package.json or its lock file for the aws-cdk CLI, cdk.json context for feature flags).\n" +
			"Exit code 1 when a check fails.",
		Args: exactArgs(2, "two arguments, BASE and HEAD assembly directories"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Base, opts.Head, opts.Format = args[0], args[1], f.value
			return runCompatAssembly(streams, opts)
		},
	}
	cmd.Flags().Var(f, "format", "output format: text, markdown or json")
	cmd.Flags().StringVar(&opts.Repo, "repo", "",
		"the repository of HEAD, for the pinned aws-cdk CLI and cdk.json context")
	return cmd
}

func runCompatAssembly(streams IO, opts compatAssemblyOptions) error {
	checks, err := pipeline.CompatAssembly(opts.CompatAssemblyOptions)
	if err != nil {
		return err
	}
	switch opts.Format {
	case "json":
		err = render.CompatJSON(streams.Out, checks)
	case "markdown":
		err = render.CompatMarkdown(streams.Out, checks)
	default:
		err = render.CompatText(streams.Out, checks)
	}
	if err != nil {
		return err
	}
	if checks.Failed() {
		return failure.Blocked
	}
	return nil
}
