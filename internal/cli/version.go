package cli

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

func newVersionCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print cdkbot's version and the cloud assembly schema versions it reads",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			sch := assembly.Schema()
			rev, when := Build()
			if f.value == "json" {
				enc := json.NewEncoder(streams.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{
					"version": Version(), "commit": rev, "date": when, "os": runtime.GOOS, "arch": runtime.GOARCH,
					"schemaMaxMajor": sch.MaxMajor, "schemaSource": sch.Source,
				})
			}
			_, err := fmt.Fprint(streams.Out, versionText())
			return err
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	return cmd
}

// versionText is what `cdkbot version` and `cdkbot --version` print.
func versionText() string {
	rev, when := Build()
	built := ""
	if rev != "" {
		built = " (commit " + rev[:min(len(rev), 12)]
		if when != "" {
			built += ", built " + when
		}
		built += ")"
	}
	sch := assembly.Schema()
	return fmt.Sprintf("cdkbot %s%s %s/%s\n"+
		"cloud assembly schema: reads every version up to %d.x (embedded from %s)\n",
		Version(), built, runtime.GOOS, runtime.GOARCH, sch.MaxMajor, sch.Source)
}
