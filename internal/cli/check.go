package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/cfn"
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
	cmd.Flags().BoolVar(&opts.NoStabilization, "no-stabilization", false, "one pass only (the legacy behaviour: aspects added or nodes created by aspects may be missed)")
	cmd.Flags().StringVar(&opts.Write, "write", "", "write the assembly with mutated templates to this new directory")
	return cmd
}

func runCheck(streams IO, opts checkOptions, configGiven bool) error {
	a, err := loadAssembly(opts.Assembly)
	if err != nil {
		return err
	}
	cfg := &aspects.Config{}
	raw, err := os.ReadFile(opts.Config)
	switch {
	case err == nil:
		if cfg, err = aspects.ParseConfig(opts.Config, raw); err != nil {
			return &inputError{err}
		}
	case errors.Is(err, fs.ErrNotExist) && !configGiven:
		fmt.Fprintf(streams.Err, "no %s: no policy configured, nothing to check (see README \"cdkbot check\")\n", opts.Config)
	default:
		return usagef("--config %s: %v", opts.Config, err)
	}
	if opts.NoStabilization {
		off := false
		cfg.Stabilization = &off
	}
	app, err := aspects.Build(a)
	if err != nil {
		return &inputError{err}
	}
	rep, err := aspects.Run(app, cfg, nil)
	if err != nil {
		return &inputError{err}
	}
	if opts.Write != "" {
		if err := writeMutated(opts.Assembly, opts.Write, app); err != nil {
			return err
		}
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
		return &verdictError{}
	}
	return nil
}

// writeMutated copies the assembly to dir (which must not exist) and rewrites the templates
// mutating aspects changed. It writes into a temporary sibling first and renames it, so a
// failure leaves nothing half-written.
func writeMutated(src, dir string, app *aspects.App) error {
	if _, err := os.Stat(dir); err == nil {
		return usagef("--write %s: the directory exists; name a new one", dir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), ".cdkbot-write-")
	if err != nil {
		return &operationError{err}
	}
	defer os.RemoveAll(tmp)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		return &operationError{fmt.Errorf("copy %s: %w", src, err)}
	}
	for id, tpl := range app.ChangedTemplates() {
		s := app.ArtifactByID(id)
		out := []byte(cfn.JSON(tpl) + "\n")
		if err := os.WriteFile(filepath.Join(tmp, filepath.FromSlash(s.TemplatePath)), out, 0o644); err != nil {
			return &operationError{err}
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return &operationError{err}
	}
	return nil
}
