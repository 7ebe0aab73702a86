package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
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
		Example: "  cdkbot diff base/cdk.out cdk.out\n  cdkbot diff old.template.json new.template.yaml --format markdown\n  cdkbot diff base/cdk.out cdk.out --stacks 'Prod/*' --fail",
		Args:    exactArgs(2, "two arguments, OLD and NEW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Old, opts.New, opts.Format = args[0], args[1], f.value
			return runDiff(streams, opts)
		},
	}
	cmd.Flags().Var(f, "format", "output format: text, markdown or json")
	cmd.Flags().StringSliceVar(&opts.Stacks, "stacks", nil, "only stacks whose id, display name or stack name matches this glob (repeatable)")
	cmd.Flags().BoolVar(&opts.Fail, "fail", false, "exit with code 1 when there are differences")
	cmd.Flags().BoolVar(&opts.ShowMetadata, "show-metadata", false, "show resources whose only change is their Metadata")
	cmd.Flags().BoolVar(&opts.NoColor, "no-color", false, "no colours in text output (also: NO_COLOR)")
	return cmd
}

func runDiff(streams IO, opts diffOptions) error {
	for _, g := range opts.Stacks {
		if _, err := path.Match(g, ""); err != nil {
			return usagef("--stacks %q is not a valid glob: %v", g, err)
		}
	}
	oldDir, err := isDir(opts.Old)
	if err != nil {
		return err
	}
	newDir, err := isDir(opts.New)
	if err != nil {
		return err
	}
	var report render.DiffReport
	switch {
	case oldDir && newDir:
		oldA, err := loadAssembly(opts.Old)
		if err != nil {
			return err
		}
		newA, err := loadAssembly(opts.New)
		if err != nil {
			return err
		}
		report.Stacks, err = cfndiff.DiffAssemblies(oldA, newA, stackFilter(opts.Stacks), cfndiff.Options{})
		if err != nil {
			return &inputError{err}
		}
	case !oldDir && !newDir:
		oldT, err := readTemplate(opts.Old)
		if err != nil {
			return err
		}
		newT, err := readTemplate(opts.New)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(opts.New), filepath.Ext(opts.New))
		report.Stacks = []*cfndiff.StackDiff{cfndiff.DiffTemplates(name, oldT, newT, cfndiff.Options{})}
	default:
		return usagef("OLD and NEW must both be template files or both be cloud assembly directories (got %s and %s)", opts.Old, opts.New)
	}

	view := render.DiffOptions{ShowMetadata: opts.ShowMetadata, Color: !opts.NoColor && colorWanted(streams.Out)}
	switch opts.Format {
	case "json":
		err = render.DiffJSON(streams.Out, report)
	case "markdown":
		err = render.DiffMarkdown(streams.Out, report, view)
	default:
		err = render.DiffText(streams.Out, report, view)
	}
	if err != nil {
		return err
	}
	if opts.Fail && report.HasChanges() {
		return &verdictError{}
	}
	return nil
}

func isDir(p string) (bool, error) {
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, usagef("%s: no such file or directory", p)
	}
	if err != nil {
		return false, usagef("%s: %v", p, err)
	}
	return info.IsDir(), nil
}

func readTemplate(p string) (*cfn.Object, error) {
	// A FIFO or a device would hang the read or never end: only regular files, bounded.
	if info, err := os.Stat(p); err == nil && (!info.Mode().IsRegular() || info.Size() > assembly.MaxFileSize) {
		return nil, usagef("%s: not a regular file of at most %d bytes (%s, %d bytes)", p, int64(assembly.MaxFileSize), info.Mode().Type(), info.Size())
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, usagef("%s: %v", p, err)
	}
	t, err := cfn.Parse(raw)
	if err != nil {
		return nil, &inputError{fmt.Errorf("%s: %w", p, err)}
	}
	return t, nil
}

// stackFilter keeps stacks whose qualified id, display name or stack name matches a glob.
func stackFilter(globs []string) func(*assembly.Stack) bool {
	if len(globs) == 0 {
		return nil
	}
	return func(s *assembly.Stack) bool {
		for _, g := range globs {
			if s.Matches(g) {
				return true
			}
		}
		return false
	}
}

// colorWanted is true when w is a terminal and the user did not opt out with NO_COLOR.
func colorWanted(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
