package cli

import (
	"embed"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/pipeline"
)

// The demo's example: a README, a policy and the shop's assembly before and after a risky PR.
//
//go:embed demo
var demoFS embed.FS

func newDemoCommand(streams IO) *cobra.Command {
	f := &format{value: "markdown", allowed: []string{"markdown", "text", "json"}}
	keep := false
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Review an embedded example change, with no AWS account, no token and no node: what a PR comment shows",
		Long: "demo builds a throwaway git repository from an embedded CDK app (two commits with their synthesized\n" +
			"assemblies: the app and a risky pull request to it) and runs the review between them, printing it\n" +
			"exactly as it would be posted on the pull request.",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "cdkbot-demo-")
			if err != nil {
				return failure.OperationErr(err)
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			opts, err := buildDemo(dir)
			if err != nil {
				return err
			}
			if keep {
				fmt.Fprintf(streams.Err, "demo repository kept at %s\n", dir)
			}
			err = runReview(cmd.Context(), streams, opts, reviewFlags{Format: f.value})
			if failure.Is(err, failure.Verdict) {
				fmt.Fprintln(streams.Err, "(on a pull request, cdkbot's check would fail: a gate blocks this change)")
				return nil
			}
			return err
		},
	}
	cmd.Flags().Var(f, "format", "output format: markdown (the PR comment), text or json")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the demo repository and print where it is")
	return cmd
}

// buildDemo writes the embedded example into dir as a repository and returns its review.
func buildDemo(dir string) (pipeline.ReviewOptions, error) {
	files, err := fs.Sub(demoFS, "demo")
	if err != nil {
		return pipeline.ReviewOptions{}, failure.OperationErr(err)
	}
	return pipeline.BuildDemo(dir, files)
}

// buildDemoRepo writes the embedded example into dir as a repository of two commits.
func buildDemoRepo(dir string) error {
	_, err := buildDemo(dir)
	return err
}
