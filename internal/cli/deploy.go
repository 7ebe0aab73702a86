package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/deploy"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/publish"
	"github.com/cdkbot/cdkbot/internal/publishplan"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// DefaultWaves is the continuous-delivery "mutation" wave: pipeline stacks deploy before
// everything else, so a change to the pipeline applies before what it deploys.
var DefaultWaves = []string{"pipeline-*"}

// deployOptions are the inputs of `cdkbot deploy`.
type deployOptions struct {
	Dir             string
	Stacks, Exclude []string
	NoDeps          bool
	Format          string
	Toolkit         toolkitFlags
	Revision        string
	Concurrency     int
	OutputsFile     string
	RequireApproval string
	Waves           []string
	NoPublish       bool
	Timeout         time.Duration
	Config          string
	// Policy is the configuration's aspects: where they mutate a template, the mutated template
	// deploys (what the review diffed and hashed).
	Policy *aspects.Config
	// AllowExecutables runs asset build commands from the assembly (trusted revisions only).
	AllowExecutables bool
	// OnPlan, when set, hears the plan before anything is published or deployed (the merge
	// flow opens GitHub deployments per environment there).
	OnPlan func(*deployplan.Plan)
}

func newDeployCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	approval := &format{value: "never", allowed: []string{"never", "broadening"}}
	o := deployOptions{}
	cmd := &cobra.Command{
		Use:   "deploy ASSEMBLY",
		Short: "Publish the assets and deploy the stacks of a cloud assembly with CloudFormation change sets, in dependency order",
		Long: "deploy deploys every stack of the assembly (or those selected with --stacks, plus what they depend\n" +
			"on unless --no-deps), each right after publishing its assets (as `cdkbot publish` does; --no-publish\n" +
			"when a previous step did), to its environment: it assumes the stack's deploy role, checks\n" +
			"the environment's bootstrap version, skips stacks whose deployed template and parameters are\n" +
			"unchanged, and otherwise creates and executes a change set with the CloudFormation execution role,\n" +
			"following its events. Independent stacks deploy in parallel (--concurrency); stacks matching a\n" +
			"--wave glob deploy before the rest, wave by wave. A failed stack skips the stacks that depend on it\n" +
			"and later waves; independent stacks still finish.",
		Args: exactArgs(1, "one argument, the cloud assembly directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir, o.Format, o.RequireApproval = args[0], f.value, approval.value
			set, policy, err := deploySettings(o.Config, cmd.Flags().Changed("config"))
			if err != nil {
				return err
			}
			o.Policy = policy
			if !cmd.Flags().Changed("wave") && len(set.Waves) > 0 {
				o.Waves = set.Waves
			}
			if !cmd.Flags().Changed("concurrency") && set.Concurrency > 0 {
				o.Concurrency = set.Concurrency
			}
			if !cmd.Flags().Changed("require-approval") && set.RequireApproval != "" {
				o.RequireApproval = set.RequireApproval
			}
			if o.Concurrency < 1 {
				return usagef("--concurrency must be at least 1")
			}
			return runDeploy(cmd.Context(), streams, o)
		},
	}
	cmd.Flags().StringSliceVar(&o.Stacks, "stacks", nil, "deploy only stacks matching these globs (id, display name or stack name)")
	cmd.Flags().StringSliceVar(&o.Exclude, "exclude", nil, "leave out stacks matching these globs")
	cmd.Flags().BoolVar(&o.NoDeps, "no-deps", false, "deploy exactly the selection, not the stacks it depends on")
	cmd.Flags().IntVar(&o.Concurrency, "concurrency", 4, "stacks deployed at once")
	cmd.Flags().StringVar(&o.OutputsFile, "outputs-file", "", "write the stacks' outputs to this JSON file ({\"StackName\": {\"Key\": \"value\"}})")
	cmd.Flags().Var(approval, "require-approval", "never, or broadening: refuse a stack whose change grants IAM or network permissions")
	cmd.Flags().StringSliceVar(&o.Waves, "wave", DefaultWaves, "stacks matching each glob deploy first, wave by wave (repeat the flag for more waves)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", time.Hour, "give up on a stack that has not finished deploying after this long")
	cmd.Flags().BoolVar(&o.NoPublish, "no-publish", false, "do not publish assets (an earlier step ran cdkbot publish)")
	cmd.Flags().BoolVar(&o.AllowExecutables, "allow-executables", false, "run the commands of assets built by an executable (trusted revisions only)")
	cmd.Flags().Var(f, "format", "output format: text or json")
	cmd.Flags().StringVar(&o.Config, "config", ".cdkbot.yml", "configuration whose deploy section sets waves, concurrency and require-approval (flags win)")
	o.Toolkit.add(cmd)
	cmd.Flags().StringVar(&o.Revision, "revision", "", "the commit being deployed; names the change sets")
	return cmd
}

func runDeploy(ctx context.Context, streams IO, o deployOptions) error {
	a, err := loadAssembly(o.Dir)
	if err != nil {
		return err
	}
	var gha *ghaction.Runtime
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		gha, _ = ghaction.New(os.Getenv, streams.Err)
	}
	rep, err := deployAssembly(ctx, streams, a, o, gha)
	var rerr error
	if rep != nil {
		if o.Format == "json" {
			rerr = render.DeploySummaryJSON(streams.Out, *rep)
		} else {
			rerr = render.DeploySummaryText(streams.Out, *rep)
		}
	}
	if err != nil {
		return err
	}
	return rerr
}

// deployAssembly publishes and deploys; the report is there whenever anything was attempted,
// also with the error. It is shared by `cdkbot deploy` and the merge flow of the action.
func deployAssembly(ctx context.Context, streams IO, a *assembly.Assembly, o deployOptions, gha *ghaction.Runtime) (*render.DeployReport, error) {
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		return nil, &operationError{err}
	}
	opts := deployplan.Options{DefaultRegion: cfg.Region, Stacks: o.Stacks, Exclude: o.Exclude, NoDeps: o.NoDeps,
		ToolkitBucket: o.Toolkit.Bucket, Revision: o.Revision, Waves: o.Waves}
	for _, s := range a.AllStacks() {
		if s.Environment.AccountKnown() {
			continue
		}
		// Environment-agnostic stacks go to the account of the credentials, as with the CDK CLI.
		id, err := awsconfig.WhoAmI(ctx, cfg)
		if err != nil {
			return nil, &operationError{err}
		}
		opts.DefaultAccount = id.Account
		break
	}
	if hasLegacyFileAssets(a) {
		if opts.ToolkitBucket, err = o.Toolkit.bucket(ctx, cfg); err != nil {
			return nil, &operationError{err}
		}
	}
	pp, err := publishplan.Build(a, publishplan.Options{DefaultAccount: opts.DefaultAccount, DefaultRegion: opts.DefaultRegion,
		ToolkitBucket: opts.ToolkitBucket})
	if err != nil {
		return nil, &inputError{err}
	}
	// Legacy stacks take their assets' locations as parameters, the same the publish step used.
	opts.Parameters = pp.Parameters
	if opts.Templates, err = review.MutatedTemplates(a, o.Policy, nil); err != nil {
		return nil, &inputError{err}
	}
	plan, err := deployplan.Build(a, opts)
	if err != nil {
		return nil, &inputError{err}
	}
	if o.OnPlan != nil {
		o.OnPlan(plan)
	}
	sessions := awsconfig.NewSessions(cfg, awsconfig.Options{SessionName: "cdkbot-deploy"})
	var assets *stackAssets
	if !o.NoPublish {
		if assets, err = newStackAssets(streams, plan, pp, sessions, o); err != nil {
			return nil, err
		}
	}
	view := newDeployView(streams.Err, plan, gha)
	d := &deploy.Deployer{Sessions: sessions, ReadTemplate: a.ReadFile, Concurrency: o.Concurrency, Timeout: o.Timeout,
		Events: view.event, Progress: view.progress}
	if o.RequireApproval == "broadening" {
		d.Approve = refuseBroadening
	}
	if assets != nil {
		assets.log = view.line
		d.BeforeStack = assets.publish
	}
	start := time.Now()
	outcomes, err := d.Run(ctx, plan)
	view.stop()
	rep := &render.DeployReport{Revision: o.Revision, Outcomes: outcomes, Seconds: time.Since(start).Seconds()}
	if o.OutputsFile != "" {
		if werr := writeOutputs(o.OutputsFile, outcomes); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return rep, &operationError{err}
	}
	return rep, nil
}

// stackAssets publishes each stack's assets just before the stack deploys, so a slow asset
// (a docker build) holds up only the stacks that need it. The whole plan is checked up front:
// an asset that can never be published stops the run with nothing deployed.
type stackAssets struct {
	plan *publishplan.Plan
	opts publish.Options
	log  func(stack, line string)
}

func newStackAssets(streams IO, plan *deployplan.Plan, pp *publishplan.Plan, sessions *awsconfig.Sessions, o deployOptions) (*stackAssets, error) {
	sa := &stackAssets{plan: assetsOf(plan, pp), opts: publish.Options{Root: o.Dir,
		Files: publish.S3Stores(sessions), Images: publish.ECRStores(sessions), Docker: publish.DockerCLI{Output: streams.Err},
		AllowExecutables: o.AllowExecutables}}
	if err := publish.Check(sa.plan, sa.opts); err != nil {
		return nil, &inputError{fmt.Errorf("nothing deployed: %w", err)}
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
	}{{len(sec.StatementsAdded), "IAM statement"}, {len(sec.ManagedPoliciesAdded), "managed policy attachment"},
		{len(sec.RulesAdded), "security-group rule"}, {len(sec.SSOPermissionSetsAdded) + len(sec.SSOAssignmentsAdded), "SSO grant"}} {
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
		return &operationError{fmt.Errorf("--outputs-file: %w", err)}
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return &operationError{fmt.Errorf("--outputs-file: %w", err)}
	}
	if err := tmp.Close(); err != nil {
		return &operationError{fmt.Errorf("--outputs-file: %w", err)}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return &operationError{fmt.Errorf("--outputs-file: %w", err)}
	}
	return nil
}

// assetsOf is the part of a publish plan the planned stacks need: their asset manifests' jobs
// and, for legacy stacks, the stack's own assets.
func assetsOf(plan *deployplan.Plan, pp *publishplan.Plan) *publishplan.Plan {
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

// deploySettings reads the configuration file: its deploy section and its policy (the aspects
// whose mutations deploy); a missing default file is no configuration, a missing explicit one
// an error.
func deploySettings(path string, explicit bool) (deployplan.Settings, *aspects.Config, error) {
	raw, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err) && !explicit:
		return deployplan.Settings{}, nil, nil
	case err != nil:
		return deployplan.Settings{}, nil, usagef("--config %s: %v", path, err)
	}
	cfg, err := aspects.ParseConfig(path, raw)
	if err != nil {
		return deployplan.Settings{}, nil, &inputError{err}
	}
	set, err := deployplan.ParseSettings(path, &cfg.Deploy)
	if err != nil {
		return deployplan.Settings{}, nil, &inputError{err}
	}
	return set, cfg, nil
}
