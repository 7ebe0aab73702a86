package cli

import (
	"encoding/json"
	"fmt"

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
			if f.value == "json" {
				enc := json.NewEncoder(streams.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{
					"version": Version(), "schemaMaxMajor": sch.MaxMajor, "schemaSource": sch.Source,
				})
			}
			_, err := fmt.Fprintf(streams.Out, "cdkbot %s\ncloud assembly schema: reads every version up to %d.x (embedded from %s)\n",
				Version(), sch.MaxMajor, sch.Source)
			return err
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	return cmd
}
