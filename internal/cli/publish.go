package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/publish"
	"github.com/cdkbot/cdkbot/internal/publishplan"
	"github.com/cdkbot/cdkbot/internal/render"
)

// publishOptions are the inputs of `cdkbot publish`.
type publishOptions struct {
	Dir         string
	IDs         []string
	DryRun      bool
	Concurrency int
	// BuildConcurrency bounds docker builds at once.
	BuildConcurrency int
	AllowExecutables bool
	Format           string
	Toolkit          toolkitFlags
}

func newPublishCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	o := publishOptions{}
	cmd := &cobra.Command{
		Use:   "publish ASSEMBLY [ID,ID...]",
		Short: "Publish the assets of a cloud assembly: files to S3, docker images to ECR (idempotent)",
		Long: "publish uploads every asset of the assembly (or those selected by id, or id prefix of 8+\n" +
			"characters) to each destination, assuming the destination's publishing role. What is already\n" +
			"present is skipped, so a re-run uploads only what is missing. Directories are zipped\n" +
			"deterministically; images are built once with `docker build`, then tagged and pushed to each\n" +
			"repository. --dry-run checks what is present and uploads nothing. Assets built by an\n" +
			"`executable` run code from the app: refused unless --allow-executables.\n" +
			"AWS credentials and endpoint come from the standard AWS configuration (AWS_PROFILE,\n" +
			"AWS_REGION, AWS_ENDPOINT_URL, ...). Progress goes to stderr, the summary to stdout.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("%s takes the assembly directory and optionally a comma-separated list of asset ids", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir, o.Format = args[0], f.value
			if len(args) == 2 {
				for _, id := range strings.Split(args[1], ",") {
					if id = strings.TrimSpace(id); id != "" {
						o.IDs = append(o.IDs, id)
					}
				}
			}
			if o.Concurrency < 1 || o.BuildConcurrency < 1 {
				return usagef("--concurrency and --build-concurrency must be at least 1")
			}
			return runPublish(cmd.Context(), streams, o)
		},
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "check which assets are already published; upload nothing")
	cmd.Flags().IntVar(&o.Concurrency, "concurrency", 8, "assets published at once")
	cmd.Flags().BoolVar(&o.AllowExecutables, "allow-executables", false, "run the commands of assets built by an executable (code from the app: trusted revisions only)")
	cmd.Flags().IntVar(&o.BuildConcurrency, "build-concurrency", 1, "docker images built at once")
	cmd.Flags().Var(f, "format", "output format: text or json")
	o.Toolkit.add(cmd)
	return cmd
}

func runPublish(ctx context.Context, streams IO, o publishOptions) error {
	a, err := loadAssembly(o.Dir)
	if err != nil {
		return err
	}
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		return &operationError{err}
	}
	popts := publishplan.Options{IDs: o.IDs, DefaultRegion: cfg.Region}
	if hasLegacyFileAssets(a) {
		if popts.ToolkitBucket, err = o.Toolkit.bucket(ctx, cfg); err != nil {
			return &operationError{err}
		}
	}
	plan, err := publishplan.Build(a, popts)
	if err != nil {
		return &inputError{err}
	}
	if needsAccount(plan) {
		// Environment-agnostic stacks publish to the account of the credentials, as with the CDK CLI.
		id, err := awsconfig.WhoAmI(ctx, cfg)
		if err != nil {
			return &operationError{err}
		}
		popts.DefaultAccount = id.Account
		if plan, err = publishplan.Build(a, popts); err != nil {
			return &inputError{err}
		}
	}
	// In GitHub Actions the per-event lines fold into a group and failures become annotations.
	var gha *ghaction.Runtime
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		if gha, _ = ghaction.New(os.Getenv, streams.Err); gha != nil {
			gha.Group(fmt.Sprintf("cdkbot publish: %d assets", len(plan.Jobs)))
		}
	}
	sessions := awsconfig.NewSessions(cfg, awsconfig.Options{SessionName: "cdkbot-publish"})
	progress := progressPrinter(streams.Err, plan)
	var live *liveDisplay
	if gha == nil && isTerminal(streams.Err) {
		live = newLiveDisplay(streams.Err)
		progress = live.event
	}
	s, err := publish.Run(ctx, plan, publish.Options{Root: o.Dir, Concurrency: o.Concurrency, DryRun: o.DryRun,
		Progress: progress,
		Files:    publish.S3Stores(sessions), Images: publish.ECRStores(sessions), Docker: publish.DockerCLI{Output: streams.Err},
		DockerConcurrency: o.BuildConcurrency, AllowExecutables: o.AllowExecutables})
	if live != nil {
		live.stop() // the final frame, before the summary goes below it
	}
	if gha != nil {
		gha.EndGroup()
		for _, oc := range s.Outcomes {
			if oc.State == publish.Failed {
				gha.Error("cdkbot publish: %s", oc.Error)
			}
		}
	}
	if refused := new(publish.RefusedError); errors.As(err, &refused) {
		return &inputError{err}
	}
	var rerr error
	if o.Format == "json" {
		rerr = render.PublishSummaryJSON(streams.Out, s, o.DryRun)
	} else {
		rerr = render.PublishSummaryText(streams.Out, s, o.DryRun)
	}
	if err != nil {
		return &operationError{err}
	}
	return rerr
}

// progressPrinter reports each step as it happens, one line each with a running count, so a CI
// log shows progress on long uploads and which asset is slow.
func progressPrinter(w io.Writer, plan *publishplan.Plan) func(publish.Event) {
	total := 0
	for _, j := range plan.Jobs {
		total += len(j.Destinations)
	}
	done := 0
	return func(e publish.Event) {
		switch e.State {
		case publish.Packaging:
			fmt.Fprintf(w, "cdkbot: zipping %.12s\n", render.Clean(e.Asset))
		case publish.Uploading:
			if e.Sent == 0 {
				fmt.Fprintf(w, "cdkbot: uploading %.12s → %s (%d bytes)\n", render.Clean(e.Asset), render.Clean(e.Destination), e.Bytes)
			}
		case publish.Published, publish.Present, publish.Missing, publish.Failed:
			done++
			fmt.Fprintf(w, "cdkbot: [%d/%d] %.12s → %s: %s\n", done, total, render.Clean(e.Asset), render.Clean(e.Destination), e.State)
		}
	}
}

// needsAccount is true when a destination still waits for the account of the credentials.
func needsAccount(p *publishplan.Plan) bool {
	for _, j := range p.Jobs {
		for _, d := range j.Destinations {
			for _, s := range []string{d.Bucket, d.Key, d.AssumeRoleARN, d.Repository} {
				if strings.Contains(s, "${AWS::AccountId}") || strings.Contains(s, assembly.UnknownAccount) {
					return true
				}
			}
		}
	}
	return false
}

func hasLegacyFileAssets(a *assembly.Assembly) bool {
	for _, s := range a.AllStacks() {
		for _, la := range s.LegacyAssets() {
			if la.Packaging != "container-image" {
				return true
			}
		}
	}
	return false
}

// toolkitFlags name the legacy (v1) staging bucket, for publish and deploy alike.
type toolkitFlags struct {
	Bucket, Stack string
}

func (t *toolkitFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.Bucket, "toolkit-bucket", "", "staging bucket of legacy (CDK v1) assets and templates; default: the toolkit stack's BucketName output")
	cmd.Flags().StringVar(&t.Stack, "toolkit-stack-name", "CDKToolkit", "bootstrap stack to read the legacy staging bucket from")
}

// bucket is the flag's bucket, or the bootstrap stack's BucketName output.
func (t *toolkitFlags) bucket(ctx context.Context, cfg aws.Config) (string, error) {
	if t.Bucket != "" {
		return t.Bucket, nil
	}
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: &t.Stack})
	if err != nil {
		return "", fmt.Errorf("read the staging bucket of legacy assets from stack %s: %s (bootstrap the environment, or pass --toolkit-bucket)", t.Stack, awsconfig.Explain(err))
	}
	for _, s := range out.Stacks {
		for _, o := range s.Outputs {
			if aws.ToString(o.OutputKey) == "BucketName" {
				return aws.ToString(o.OutputValue), nil
			}
		}
	}
	return "", fmt.Errorf("stack %s has no BucketName output: pass the staging bucket with --toolkit-bucket", t.Stack)
}
