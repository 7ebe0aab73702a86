package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/config"
	"github.com/cdkbot/cdkbot/internal/deploy"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/publish"
	"github.com/cdkbot/cdkbot/internal/publishplan"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// DefaultWaves is the continuous-delivery "mutation" wave: pipeline stacks deploy before
// everything else, so a change to the pipeline applies before what it deploys.
var DefaultWaves = []string{"pipeline-*"}

// DeployOptions are the inputs of a deploy, whichever door it comes through (`cdkbot deploy`,
// the action's merge flow).
type DeployOptions struct {
	Dir             string // the assembly's directory: asset sources are read under it
	Stacks, Exclude []string
	NoDeps          bool
	// ToolkitBucket and ToolkitStack name the legacy (v1) staging bucket: the bucket, or the
	// bootstrap stack whose BucketName output it is.
	ToolkitBucket, ToolkitStack string
	Revision                    string
	Concurrency                 int
	OutputsFile                 string
	RequireApproval             string
	Waves                       []string
	NoPublish                   bool
	Timeout                     time.Duration
	// Policy is the configuration's aspects: where they mutate a template, the mutated template
	// deploys (what the review diffed and hashed).
	Policy *aspects.Config
	// Templates, when not nil, are those mutated templates by qualified stack id, computed by a
	// caller that compared them with the reviews first (review.MutatedTemplates): the policy is
	// then not applied again.
	Templates map[string][]byte
	// Pinned, when not nil, are the exact bytes every stack deploys (review.DeployTemplates, the
	// policy applied), as a caller compared them with a review: they reach CloudFormation as
	// they are, whatever the assembly's files or template URLs say afterwards.
	Pinned map[string][]byte
	// Running are what each stack must run before it deploys (deployplan.Stack.Running).
	Running map[string]deployplan.Expectation
	// AllowExecutables runs asset build commands from the assembly (trusted revisions only).
	AllowExecutables bool
	// OnPlan, when set, hears the plan before anything is published or deployed (the merge
	// flow opens GitHub deployments per environment there).
	OnPlan func(*deployplan.Plan)
	// View, when set, is how the deployment is shown as it happens: it is made once the plan is
	// known. Nil shows nothing.
	View func(*deployplan.Plan) DeployView
	// BuildOutput receives the output of asset builds (docker); nil discards it.
	BuildOutput io.Writer
}

// DeployView shows a deployment as it happens: the callbacks deploy already takes.
type DeployView interface {
	Event(deployplan.Event)
	Progress(deployplan.Progress)
	// Line is one line about a stack that is not a CloudFormation event (its assets published).
	Line(stack, text string)
	// Stop draws the last frame; nothing is shown after it.
	Stop()
}

// quietView shows nothing.
type quietView struct{}

func (quietView) Event(deployplan.Event)       {}
func (quietView) Progress(deployplan.Progress) {}
func (quietView) Line(string, string)          {}
func (quietView) Stop()                        {}

// Deploy publishes and deploys the assembly a, read from o.Dir; the report is there whenever
// anything was attempted, also with the error. `cdkbot deploy` and the merge flow share it.
func Deploy(ctx context.Context, a *assembly.Assembly, o DeployOptions) (*deployplan.Report, error) {
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		return nil, failure.OperationErr(err)
	}
	opts := deployplan.Options{DefaultRegion: cfg.Region, Stacks: o.Stacks, Exclude: o.Exclude, NoDeps: o.NoDeps,
		ToolkitBucket: o.ToolkitBucket, Revision: o.Revision, Waves: o.Waves, Templates: o.Templates}
	// What publishing needs to know before the plan (the credentials' account, the legacy staging
	// bucket) is bounded as one stack's publishing is.
	lookups, cancel := context.WithTimeout(ctx, stackLimit(o.Timeout))
	defer cancel()
	for _, s := range a.AllStacks() {
		if s.Environment.AccountKnown() {
			continue
		}
		// Environment-agnostic stacks go to the account of the credentials, as with the CDK CLI.
		id, err := awsconfig.WhoAmI(lookups, cfg)
		if err != nil {
			return nil, failure.OperationErr(err)
		}
		opts.DefaultAccount = id.Account
		break
	}
	if HasLegacyFileAssets(a) {
		if opts.ToolkitBucket, err = toolkitBucket(lookups, cfg, o.ToolkitBucket, o.ToolkitStack); err != nil {
			return nil, failure.OperationErr(err)
		}
	}
	cancel()
	pp, err := publishplan.Build(a, publishplan.Options{
		DefaultAccount: opts.DefaultAccount, DefaultRegion: opts.DefaultRegion, ToolkitBucket: opts.ToolkitBucket,
	})
	if err != nil {
		return nil, failure.InputErr(err)
	}
	// Legacy stacks take their assets' locations as parameters, the same the publish step used.
	opts.Parameters = pp.Parameters
	opts.Pinned, opts.Running = o.Pinned, o.Running
	if opts.Templates == nil && opts.Pinned == nil {
		if opts.Templates, err = review.MutatedTemplates(a, o.Policy, nil); err != nil {
			return nil, failure.InputErr(err)
		}
	}
	plan, err := deployplan.Build(a, opts)
	if err != nil {
		return nil, failure.InputErr(err)
	}
	if o.OnPlan != nil {
		o.OnPlan(plan)
	}
	sessions := awsconfig.NewSessions(cfg, awsconfig.Options{SessionName: "cdkbot-deploy"})
	var assets *stackAssets
	if !o.NoPublish {
		if assets, err = newStackAssets(plan, pp, sessions, o); err != nil {
			return nil, err
		}
	}
	var view DeployView = quietView{}
	if o.View != nil {
		view = o.View(plan)
	}
	readTemplate := func(name string) ([]byte, error) { return a.ReadFile(name, assembly.MaxFileSize) }
	d := &deploy.Deployer{Sessions: sessions, ReadTemplate: readTemplate, Concurrency: o.Concurrency, Timeout: o.Timeout,
		Events: view.Event, Progress: view.Progress}
	if o.RequireApproval == "broadening" {
		d.Approve = refuseBroadening
	}
	if assets != nil {
		assets.log = view.Line
		d.BeforeStack = assets.publish
	}
	start := time.Now()
	outcomes, err := d.Run(ctx, plan)
	view.Stop()
	rep := &deployplan.Report{Revision: o.Revision, Outcomes: outcomes, Seconds: time.Since(start).Seconds()}
	if o.OutputsFile != "" {
		if werr := writeOutputs(o.OutputsFile, outcomes); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return rep, failure.OperationErr(err)
	}
	return rep, nil
}

// stackLimit is the time one stack may take (--timeout; deploy's default when zero), for
// publishing its assets and again for deploying it.
func stackLimit(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return time.Hour
	}
	return timeout
}

// stackAssets publishes each stack's assets just before the stack deploys, so a slow asset
// (a docker build) holds up only the stacks that need it. The whole plan is checked up front:
// an asset that can never be published stops the run with nothing deployed.
type stackAssets struct {
	plan *publishplan.Plan
	opts publish.Options
	log  func(stack, line string)
}

func newStackAssets(
	plan *deployplan.Plan, pp *publishplan.Plan, sessions *awsconfig.Sessions, o DeployOptions,
) (*stackAssets, error) {
	sa := &stackAssets{plan: AssetsOf(plan, pp), opts: publish.Options{
		Root: o.Dir, AllowExecutables: o.AllowExecutables,
		Files: publish.S3Stores(sessions), Images: publish.ECRStores(sessions),
		Docker: publish.DockerCLI{Output: o.BuildOutput},
	}}
	if err := publish.Check(sa.plan, sa.opts); err != nil {
		return nil, failure.InputErr(fmt.Errorf("nothing deployed: %w", err))
	}
	return sa, nil
}

// publish implements deploy.Deployer.BeforeStack: the jobs of the stack's asset manifests (and
// of a legacy stack, its own assets). Stacks have their own manifests, so nothing is
// published twice; what is already present is skipped anyway.
func (sa *stackAssets) publish(ctx context.Context, s deployplan.Stack) error {
	mine := map[string]bool{s.ID: true}
	for _, m := range s.Assets {
		mine[m] = true
	}
	sub := &publishplan.Plan{}
	for _, j := range sa.plan.Jobs {
		if mine[j.Manifest] {
			sub.Jobs = append(sub.Jobs, j)
		}
	}
	if len(sub.Jobs) == 0 {
		return nil
	}
	sum, err := publish.Run(ctx, sub, sa.opts)
	if err != nil {
		return err
	}
	if sa.log != nil {
		sa.log(s.ID, "assets: "+render.PublishTotals(sum))
	}
	return nil
}

// refuseBroadening is the --require-approval broadening rule: a change that grants IAM or
// network permissions stops before any change set.
func refuseBroadening(s deployplan.Stack, deployed, proposed []byte) error {
	var old *cfn.Object
	if deployed != nil {
		var err error
		if old, err = cfn.Parse(deployed); err != nil {
			return fmt.Errorf("read the deployed template to check permissions: %w", err)
		}
	}
	next, err := cfn.Parse(proposed)
	if err != nil {
		return fmt.Errorf("template %s: %w", s.Template.Path, err)
	}
	sec := cfndiff.Diff(old, next, cfndiff.Options{}).Security
	if !sec.Broadened() {
		return nil
	}
	var what []string
	for _, c := range []struct {
		n    int
		noun string
	}{
		{len(sec.StatementsAdded), "IAM statement"},
		{len(sec.ManagedPoliciesAdded), "managed policy attachment"},
		{len(sec.RulesAdded), "security-group rule"},
		{len(sec.SSOPermissionSetsAdded) + len(sec.SSOAssignmentsAdded), "SSO grant"},
	} {
		if c.n > 0 {
			what = append(what, fmt.Sprintf("%d %s(s)", c.n, c.noun))
		}
	}
	return fmt.Errorf("the change broadens permissions (%s added) and --require-approval is broadening: "+
		"review it with `cdkbot diff`, then deploy with --require-approval never", strings.Join(what, ", "))
}

// writeOutputs writes {"StackName": {"OutputKey": "value"}} as the CDK CLI's --outputs-file
// does, atomically, with the stacks that deployed even when others failed.
func writeOutputs(path string, outcomes []deploy.Outcome) error {
	all := map[string]map[string]string{}
	for _, o := range outcomes {
		if o.Result.OK() {
			all[o.StackName] = o.Outputs
			if all[o.StackName] == nil {
				all[o.StackName] = map[string]string{}
			}
		}
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".outputs-*.json")
	if err != nil {
		return failure.OperationErr(fmt.Errorf("--outputs-file: %w", err))
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return failure.OperationErr(fmt.Errorf("--outputs-file: %w", err))
	}
	if err := tmp.Close(); err != nil {
		return failure.OperationErr(fmt.Errorf("--outputs-file: %w", err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return failure.OperationErr(fmt.Errorf("--outputs-file: %w", err))
	}
	return nil
}

// AssetsOf is the part of a publish plan the planned stacks need: their asset manifests' jobs
// and, for legacy stacks, the stack's own assets.
func AssetsOf(plan *deployplan.Plan, pp *publishplan.Plan) *publishplan.Plan {
	needed := map[string]bool{}
	for _, s := range plan.Stacks {
		needed[s.ID] = true
		for _, m := range s.Assets {
			needed[m] = true
		}
	}
	sub := &publishplan.Plan{}
	for _, j := range pp.Jobs {
		if needed[j.Manifest] {
			sub.Jobs = append(sub.Jobs, j)
		}
	}
	return sub
}

// LoadDeploySettings reads the configuration file's deploy section and its policy (the aspects
// whose mutations deploy); a missing file is no configuration unless it is required (named by
// the user). in is the checkout the file is read in, as LoadConfig says.
func LoadDeploySettings(path, in string, required bool) (config.Deploy, *aspects.Config, error) {
	policy, set, _, err := LoadConfig(path, in, required)
	return set, policy, err
}

// PlanOptions are the inputs of `cdkbot plan`: what deploy would do, without AWS.
type PlanOptions struct {
	Stacks, Exclude, Waves []string
	// Account and Region of environment-agnostic stacks; "" leaves placeholders.
	Account, Region string
	Policy          *aspects.Config // its aspects' mutated templates are what deploys
}

// Plan is the publish and deploy work of the assembly a, as Deploy would do it: the deploy plan
// and the publish jobs its stacks need.
func Plan(a *assembly.Assembly, o PlanOptions) (*deployplan.Plan, *publishplan.Plan, error) {
	account, region := o.Account, o.Region
	if account == "" {
		account = "CURRENT_ACCOUNT"
	}
	if region == "" {
		region = "CURRENT_REGION"
	}
	pp, err := publishplan.Build(a,
		publishplan.Options{DefaultAccount: account, DefaultRegion: region, ToolkitBucket: "TOOLKIT_BUCKET"})
	if err != nil {
		return nil, nil, failure.InputErr(err)
	}
	mutated, err := review.MutatedTemplates(a, o.Policy, nil)
	if err != nil {
		return nil, nil, failure.InputErr(err)
	}
	plan, err := deployplan.Build(a, deployplan.Options{DefaultAccount: account, DefaultRegion: region, Stacks: o.Stacks,
		Exclude: o.Exclude, Waves: o.Waves, ToolkitBucket: "TOOLKIT_BUCKET", Parameters: pp.Parameters, Templates: mutated})
	if err != nil {
		return nil, nil, failure.InputErr(err)
	}
	return plan, AssetsOf(plan, pp), nil
}
