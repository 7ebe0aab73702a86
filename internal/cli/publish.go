package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

func newPublishCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	o := pipeline.PublishOptions{}
	var format string
	cmd := &cobra.Command{
		Use:   "publish ASSEMBLY [ID,ID...]",
		Short: "Publish the assets of a cloud assembly: files to S3, docker images to ECR (idempotent)",
		Long: "publish uploads every asset of the assembly (or those selected by id, or id prefix of 8+\n" +
			"characters) to each destination, assuming the destination's publishing role. What is already\n" +
			"present is skipped, so a re-run uploads only what is missing. Directories are zipped\n" +
			"deterministically; images are built once with `docker build`, then tagged and pushed to each\n" +
			"repository. --dry-run checks what is present and uploads nothing. Assets built by an\n" +
			"`executable` run code from the app: refused unless --allow-executables. --timeout bounds the\n" +
			"whole run: past it, uploads in flight are aborted and publish fails (exit 4).\n" +
			"AWS credentials and endpoint come from the standard AWS configuration (AWS_PROFILE,\n" +
			"AWS_REGION, AWS_ENDPOINT_URL, ...). Progress goes to stderr, the summary to stdout.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return failure.Usagef("%s takes the assembly directory and optionally a comma-separated list of asset ids",
					cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir, format = args[0], f.value
			if len(args) == 2 {
				for _, id := range strings.Split(args[1], ",") {
					if id = strings.TrimSpace(id); id != "" {
						o.IDs = append(o.IDs, id)
					}
				}
			}
			if o.Concurrency < 1 || o.BuildConcurrency < 1 {
				return failure.Usagef("--concurrency and --build-concurrency must be at least 1")
			}
			if o.Timeout <= 0 {
				return failure.Usagef("--timeout must be a positive duration (such as 30m or 2h)")
			}
			return runPublish(cmd.Context(), streams, o, format)
		},
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "check which assets are already published; upload nothing")
	cmd.Flags().IntVar(&o.Concurrency, "concurrency", 8, "assets published at once")
	cmd.Flags().BoolVar(&o.AllowExecutables, "allow-executables", false,
		"run the commands of assets built by an executable (code from the app: trusted revisions only)")
	cmd.Flags().IntVar(&o.BuildConcurrency, "build-concurrency", 1, "docker images built at once")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", time.Hour,
		"give up when publishing has not finished after this long (every asset, every destination)")
	cmd.Flags().Var(f, "format", "output format: text or json")
	addToolkitFlags(cmd, &o.ToolkitBucket, &o.ToolkitStack)
	return cmd
}

func runPublish(ctx context.Context, streams IO, o pipeline.PublishOptions, format string) error {
	// In GitHub Actions the per-event lines fold into a group and failures become annotations.
	var gha *ghaction.Runtime
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		gha, _ = ghaction.New(os.Getenv, streams.Err)
	}
	o.BuildOutput = streams.Err
	o.View = func(assets, destinations int) pipeline.PublishView {
		return newPublishView(streams.Err, assets, destinations, gha)
	}
	s, err := pipeline.Publish(ctx, o)
	if s == nil {
		return err
	}
	if gha != nil {
		for _, msg := range render.PublishFailures(*s) {
			gha.Error("cdkbot publish: %s", msg)
		}
	}
	var rerr error
	if format == "json" {
		rerr = render.PublishSummaryJSON(streams.Out, *s, o.DryRun)
	} else {
		rerr = render.PublishSummaryText(streams.Out, *s, o.DryRun)
	}
	if err != nil {
		return err
	}
	return rerr
}

// publishView shows publishing where it runs: a live table on a terminal, a line per step
// elsewhere, folded into a group in GitHub Actions.
type publishView struct {
	render.PublishListener
	live *liveDisplay
	gha  *ghaction.Runtime
}

func newPublishView(w io.Writer, assets, destinations int, gha *ghaction.Runtime) *publishView {
	v := &publishView{PublishListener: render.NewPublishLog(w, destinations), gha: gha}
	if gha != nil {
		gha.Group(fmt.Sprintf("cdkbot publish: %d assets", assets))
	}
	if gha == nil && isTerminal(w) {
		v.live = newLiveDisplay(w)
		v.PublishListener = v.live
	}
	return v
}

// Stop draws the last frame and closes the group, before the summary goes below them.
func (v *publishView) Stop() {
	if v.live != nil {
		v.live.stop()
	}
	if v.gha != nil {
		v.gha.EndGroup()
	}
}

// addToolkitFlags adds the flags that name the legacy (v1) staging bucket, for publish and
// deploy alike.
func addToolkitFlags(cmd *cobra.Command, bucket, stack *string) {
	cmd.Flags().StringVar(bucket, "toolkit-bucket", "",
		"staging bucket of legacy (CDK v1) assets and templates; default: the toolkit stack's BucketName output")
	cmd.Flags().StringVar(stack, "toolkit-stack-name", pipeline.DefaultToolkitStack,
		"bootstrap stack to read the legacy staging bucket from")
}
