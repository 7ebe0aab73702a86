package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/publish"
	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// PublishOptions are the inputs of `cdkbot publish`.
type PublishOptions struct {
	Dir         string   // the assembly's directory
	IDs         []string // asset ids or id prefixes (8+ characters) to publish; none: all
	DryRun      bool
	Concurrency int
	// BuildConcurrency bounds docker builds at once.
	BuildConcurrency int
	AllowExecutables bool
	// ToolkitBucket and ToolkitStack name the legacy (v1) staging bucket, as for Deploy.
	ToolkitBucket, ToolkitStack string
	// View, when set, is made once the plan is known (its assets, and asset × destination
	// pairs) and hears every step.
	View func(assets, destinations int) PublishView
	// BuildOutput receives the output of asset builds (docker); nil discards it.
	BuildOutput io.Writer
	// Timeout bounds the whole of publishing, from the first AWS request to the last upload
	// (uploads in flight are aborted); zero is no bound.
	Timeout time.Duration
}

// PublishView shows publishing as it happens.
type PublishView interface {
	Event(publish.Event)
	// Stop ends the view once publishing is over (also on failure), before the summary.
	Stop()
}

// Publish publishes the assets of the assembly in o.Dir: files to S3, images to ECR. The summary
// is there whenever publishing ran, also with its error; a refused plan (an executable asset
// without AllowExecutables) has none.
func Publish(ctx context.Context, o PublishOptions) (s *publishplan.Summary, err error) {
	a, err := LoadAssembly(o.Dir)
	if err != nil {
		return nil, err
	}
	if o.Timeout > 0 {
		parent := ctx
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		defer func() {
			if err != nil && ctx.Err() != nil && parent.Err() == nil {
				err = failure.OperationErr(fmt.Errorf("publishing did not finish within %s (--timeout), so it "+
					"stopped there (a re-run publishes only what is missing): %w", o.Timeout, err))
			}
		}()
	}
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		return nil, failure.OperationErr(err)
	}
	popts := publishplan.Options{IDs: o.IDs, DefaultRegion: cfg.Region}
	if HasLegacyFileAssets(a) {
		if popts.ToolkitBucket, err = toolkitBucket(ctx, cfg, o.ToolkitBucket, o.ToolkitStack); err != nil {
			return nil, failure.OperationErr(err)
		}
	}
	plan, err := publishplan.Build(a, popts)
	if err != nil {
		return nil, failure.InputErr(err)
	}
	if needsAccount(plan) {
		// Environment-agnostic stacks publish to the account of the credentials, as with the CDK CLI.
		id, err := awsconfig.WhoAmI(ctx, cfg)
		if err != nil {
			return nil, failure.OperationErr(err)
		}
		popts.DefaultAccount = id.Account
		if plan, err = publishplan.Build(a, popts); err != nil {
			return nil, failure.InputErr(err)
		}
	}
	var progress func(publish.Event)
	var view PublishView
	if o.View != nil {
		destinations := 0
		for _, j := range plan.Jobs {
			destinations += len(j.Destinations)
		}
		view = o.View(len(plan.Jobs), destinations)
		progress = view.Event
	}
	sessions := awsconfig.NewSessions(cfg, awsconfig.Options{SessionName: "cdkbot-publish"})
	sum, err := publish.Run(ctx, plan, publish.Options{
		Root: o.Dir, Concurrency: o.Concurrency, DryRun: o.DryRun, Progress: progress,
		Files: publish.S3Stores(sessions), Images: publish.ECRStores(sessions),
		Docker: publish.DockerCLI{Output: o.BuildOutput}, DockerConcurrency: o.BuildConcurrency,
		AllowExecutables: o.AllowExecutables,
	})
	if view != nil {
		view.Stop()
	}
	if refused := new(publish.RefusedError); errors.As(err, &refused) {
		return nil, failure.InputErr(err)
	}
	if err != nil {
		return &sum, failure.OperationErr(err)
	}
	return &sum, nil
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

// HasLegacyFileAssets is true when a stack of a has CDK v1 file assets, which are staged in the
// toolkit stack's bucket.
func HasLegacyFileAssets(a *assembly.Assembly) bool {
	for _, s := range a.AllStacks() {
		for _, la := range s.LegacyAssets() {
			if la.Packaging != "container-image" {
				return true
			}
		}
	}
	return false
}

// DefaultToolkitStack is the bootstrap stack the legacy staging bucket is read from.
const DefaultToolkitStack = "CDKToolkit"

// toolkitBucket is the given bucket, or the bootstrap stack's BucketName output.
func toolkitBucket(ctx context.Context, cfg aws.Config, bucket, stack string) (string, error) {
	if bucket != "" {
		return bucket, nil
	}
	if stack == "" {
		stack = DefaultToolkitStack
	}
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx,
		&cloudformation.DescribeStacksInput{StackName: &stack})
	if err != nil {
		return "", fmt.Errorf("read the staging bucket of legacy assets from stack %s: %s "+
			"(bootstrap the environment, or pass --toolkit-bucket)", stack, awsconfig.Explain(err))
	}
	for _, s := range out.Stacks {
		for _, o := range s.Outputs {
			if aws.ToString(o.OutputKey) == "BucketName" {
				return aws.ToString(o.OutputValue), nil
			}
		}
	}
	return "", fmt.Errorf("stack %s has no BucketName output: pass the staging bucket with --toolkit-bucket", stack)
}
