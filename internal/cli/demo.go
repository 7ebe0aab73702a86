package cli

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/review"
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
				return &operationError{err}
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			if err := buildDemoRepo(dir); err != nil {
				return &operationError{err}
			}
			if keep {
				fmt.Fprintf(streams.Err, "demo repository kept at %s\n", dir)
			}
			err = runReview(streams, reviewOptions{Repo: dir, Base: "HEAD~1", Head: "HEAD", AssemblyDir: "cdk.out",
				Config: filepath.Join(dir, ".cdkbot.yml"), FailOn: append(slices.Clone(review.DefaultFailOn), review.GateSecurityBroadening),
				OverrideLabel: "cdkbot/approve-destructive", Key: "demo", Format: f.value,
				Deployed: deployedOff}, true, true) // the embedded example is deployed nowhere: never ask AWS
			if _, ok := err.(*verdictError); ok {
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

// buildDemoRepo writes the example into dir as two commits: the app, then the pull request.
func buildDemoRepo(dir string) error {
	repo, err := gitrepo.Init(dir)
	if err != nil {
		return err
	}
	when := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	steps := []struct{ variant, message string }{
		{"before", "shop: network, data and service stacks"},
		{"after", "checkout v2: rename the orders table, public HTTPS, write access, drop the DLQ"},
	}
	for i, step := range steps {
		if i == 0 {
			for _, f := range []string{"README.md", "cdkbot.yml"} {
				b, err := demoFS.ReadFile(path.Join("demo", f))
				if err != nil {
					return err
				}
				name := f
				if f == "cdkbot.yml" {
					name = ".cdkbot.yml"
				}
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					return err
				}
			}
		}
		if err := os.RemoveAll(filepath.Join(dir, "cdk.out")); err != nil {
			return err
		}
		variant, err := fs.Sub(demoFS, "demo/"+step.variant)
		if err != nil {
			return err
		}
		if err := os.CopyFS(filepath.Join(dir, "cdk.out"), variant); err != nil {
			return err
		}
		sig := object.Signature{Name: "Demo Developer", Email: "dev@example.com", When: when.Add(time.Duration(i) * time.Hour)}
		if _, err := repo.CommitAll(step.message, sig); err != nil {
			return err
		}
	}
	return nil
}
