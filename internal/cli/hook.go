package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/hook"
	"github.com/cdkbot/cdkbot/internal/pipeline"
)

func newHookCommand(streams IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Run the PR review locally before every git push (a pre-push hook)",
	}
	repo := "."
	var opts hook.InstallOptions
	install := &cobra.Command{
		Use:   "install [-- ARGS FOR hook run]",
		Short: "Install the pre-push hook (honours core.hooksPath; never replaces another hook without --force)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			dir, err := hooksDir(repo)
			if err != nil {
				return err
			}
			path, err := hook.Install(dir, opts)
			if errors.Is(err, hook.ErrExists) {
				return failure.Usagef("%v", err)
			}
			if err != nil {
				return failure.OperationErr(err)
			}
			_, err = fmt.Fprintf(streams.Out, "installed %s: every git push now runs `cdkbot hook run`\n", path)
			return err
		},
	}
	install.Flags().StringVar(&repo, "repo", ".", "the repository")
	install.Flags().BoolVar(&opts.Force, "force", false, "replace an existing pre-push hook")
	install.Flags().BoolVar(&opts.Chain, "chain", false, "keep an existing pre-push hook and run it first")
	install.Flags().StringVar(&opts.Command, "command", "cdkbot",
		"how the hook runs cdkbot (an absolute path when cdkbot is not on PATH)")

	uninstall := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove cdkbot's pre-push hook (and restore a chained one)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := hooksDir(repo)
			if err != nil {
				return err
			}
			if err := hook.Uninstall(dir); err != nil {
				return failure.Usagef("%v", err)
			}
			_, err = fmt.Fprintln(streams.Out, "removed cdkbot's pre-push hook")
			return err
		},
	}
	uninstall.Flags().StringVar(&repo, "repo", ".", "the repository")

	ropts := pipeline.ReviewOptions{}
	run := &cobra.Command{
		Use:   "run [-- REMOTE URL]",
		Short: "Review what git is about to push (called by the hook with git's pre-push input on stdin)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ropts.ConfigRequired = cmd.Flags().Changed("config")
			ropts.ConfigCheckout = configCheckout(ropts.ConfigRequired)
			ropts.ConfigFromHead = !ropts.ConfigRequired // the pushed revision's policy, not the working tree's
			return runHook(cmd.Context(), streams, ropts)
		},
	}
	run.Flags().StringVar(&ropts.Config, "config", ".cdkbot.yml", "the policy configuration")
	run.Flags().StringVar(&ropts.AssemblyDir, "assembly-dir", "cdk.out",
		"where each revision keeps its synthesized assembly")
	addSettings(run, &ropts, pipeline.ReviewSettings, map[string]string{
		"fail-on":           gatesUsage("gates that block the push"),
		"security-severity": "the least severity of a permission change that blocks the push (with security-broadening)",
		"base-failure":      "when the remote's commit fails to synthesize: fail (block the push) or first-deployment",
	}, "fail-on", "security-severity", "base-failure")
	cmd.AddCommand(install, uninstall, run)
	return cmd
}

func hooksDir(repo string) (string, error) {
	r, err := pipeline.OpenHistory(repo, nil)
	if err != nil {
		return "", err
	}
	dir, err := hook.HooksDir(r.Root())
	if err != nil {
		return "", failure.Usagef("%v", err)
	}
	return filepath.Clean(dir), nil
}

// runHook reviews every ref being pushed: the remote's commit (or, for a new branch, the merge
// base with the default branch) against the local one. A review it cannot run blocks the push
// with the reason: a push goes through unreviewed only when the user says so (--no-verify).
func runHook(ctx context.Context, streams IO, base pipeline.ReviewOptions) (err error) {
	defer func() {
		if err != nil && !failure.Is(err, failure.Verdict) {
			err = fmt.Errorf("%w\nthe push is blocked because it could not be reviewed; "+
				"fix the cause, or push anyway with: git push --no-verify", err)
		}
	}()
	updates, err := hook.ParseUpdates(streams.In)
	if err != nil {
		return failure.Usagef("%v", err)
	}
	repo, err := pipeline.OpenHistory(".", streams.Err)
	if err != nil {
		return err
	}
	blocked := false
	for _, u := range updates {
		if u.Deletes() {
			continue
		}
		ref := pipeline.PushedRef{LocalRef: u.LocalRef, LocalSHA: u.LocalSHA,
			RemoteSHA: u.RemoteSHA, NewBranch: u.NewBranch()}
		opts := base
		opts.Repo, opts.Head, opts.Key = repo.Root(), u.LocalSHA, "pre-push"
		opts.OverrideLabel = pipeline.DefaultOverrideLabel
		if opts.Base, err = repo.PushBase(ref); err != nil {
			return failure.Usagef("%s is a new branch and %v, so there is nothing to compare it with: "+
				"fetch the default branch (git fetch origin), or create it locally", u.LocalRef, err)
		}
		fmt.Fprintf(streams.Out, "cdkbot: reviewing %s\n", pipeline.DescribePush(ref, opts.Base))
		err := runReview(ctx, streams, opts, reviewFlags{Format: "text"})
		switch {
		case failure.Is(err, failure.Verdict):
			blocked = true
		case err != nil:
			return fmt.Errorf("review %s: %w", u.LocalRef, err)
		}
	}
	if blocked {
		fmt.Fprintln(streams.Err,
			"cdkbot: push blocked by a gate (see above). Fix the change, or push anyway with: git push --no-verify")
		return failure.Blocked
	}
	return nil
}
