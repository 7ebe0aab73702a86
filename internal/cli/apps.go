package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

func newAppsCommand(streams IO) *cobra.Command {
	opts := pipeline.AppsOptions{}
	synth := pipeline.ReviewOptions{} // the synthesis settings, as the legs' reviews take them
	f := &format{value: "text", allowed: []string{"text", "json", "github-matrix"}}
	cmd := &cobra.Command{
		Use:   "apps [--repo DIR] [--base REF] [--head REF] [--format text|json|github-matrix]",
		Short: "List the CDK apps and environments a change touches: the legs of a fanned-out review",
		Long: "apps finds every CDK app of the head revision (each cdk.json, minus node_modules, cdk.out and\n" +
			".cdkbot.yml's apps.ignore), or takes them from .cdkbot.yml's apps.list, in every environment of its\n" +
			"context (apps.context: {stage: [dev, prod]}). An app is touched when its synthesis cache key (the git\n" +
			"ids of what its synthesis reads: its directory, the workspace files above it, --synth-inputs) differs\n" +
			"between --base and --head, or when the configuration changed; the others are unchanged and never\n" +
			"synthesized. --format github-matrix prints one line of JSON: .matrix is a strategy matrix with one\n" +
			"leg per touched app and environment (each with its own comment key and report artifact), .count its\n" +
			"size; `cdkbot fan-in` reads it back with the legs' reports. An app whose cdk.json only --base has is\n" +
			"listed removed (.removed): nothing to review or deploy, and cdkbot deletes no stack, so its stacks stay\n" +
			"deployed. Run on a merge commit (--base its first parent, --head it, the review's --key), it gives the\n" +
			"deploy's legs: each deploys with its key input set to the leg's key, bound to that leg's review.",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.InstallCommand, opts.SynthCommand, opts.SynthInputs = synth.InstallCommand, synth.SynthCommand,
				synth.SynthInputs
			opts.Log = streams.Err
			if opts.Key == "" {
				opts.Key = defaultAppsKey(os.Getenv("GITHUB_WORKFLOW"))
			}
			p, err := pipeline.Apps(cmd.Context(), opts)
			if err != nil {
				return err
			}
			view := render.FanOut{Plan: p.Plan, Base: p.Base, Head: p.Head}
			switch f.value {
			case "json":
				return render.FanOutJSON(streams.Out, view)
			case "github-matrix":
				return render.FanOutMatrix(streams.Out, view)
			}
			return render.FanOutText(streams.Out, view)
		},
	}
	cmd.Flags().Var(f, "format", "output format: text, json or github-matrix")
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "a directory of the git repository (default: the current one)")
	cmd.Flags().StringVar(&opts.Base, "base", "",
		"base revision (default: the merge base of --head with the default branch)")
	cmd.Flags().StringVar(&opts.Head, "head", "", "head revision (default HEAD)")
	cmd.Flags().StringVar(&opts.Config, "config", ".cdkbot.yml",
		"the configuration whose apps section lists the apps, as a path of the repository (read at --head)")
	cmd.Flags().StringVar(&opts.Key, "key", "",
		"the combined review's comment key; each leg's is KEY/app/environment (default: the workflow's name in "+
			"GitHub Actions, so two workflows fanning out keep apart; else default). A deploy gives its review's key")
	addSettings(cmd, &synth, pipeline.ReviewSettings, nil, "install-command", "synth-command", "synth-inputs")
	return cmd
}

// defaultAppsKey keeps the fanned-out reviews of two workflows apart when neither names a key:
// the workflow's name, with what a key cannot hold made dashes.
func defaultAppsKey(workflow string) string {
	key := strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '.' || r == '_' || r == '/' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' ||
			r >= 'a' && r <= 'z') {
			return r
		}
		return '-'
	}, strings.TrimSpace(workflow))
	if strings.Trim(key, "-") == "" {
		return "default"
	}
	for strings.Contains(key, "--") { // a marker is an HTML comment: -- would end it
		key = strings.ReplaceAll(key, "--", "-")
	}
	return key
}
