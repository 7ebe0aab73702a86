package action

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/review"
)

// ReviewPipeline is the Reviewer the action runs: the review pipeline, configured once from the
// inputs, run for each request.
type ReviewPipeline struct {
	Options  pipeline.ReviewOptions
	cleanups []func()
}

var _ Reviewer = (*ReviewPipeline)(nil)

// UsesAssemblies is true when the inputs name pre-synthesized assemblies.
func (p *ReviewPipeline) UsesAssemblies() bool { return p.Options.HeadAssembly != "" }

// Review runs the pipeline for one request.
func (p *ReviewPipeline) Review(ctx context.Context, req ReviewRequest) (*review.Report, error) {
	o := p.Options
	// A pull request's committed assembly is whatever its author wrote: the head is synthesized
	// (or given as head-assembly, which the comment says), never read from the revision.
	o.CommittedHead = false
	o.Key, o.HeadSHA, o.MergeSHA, o.Approvals, o.Notes = req.Key, req.HeadSHA, req.MergeSHA, req.Approvals, req.Notes
	if p.UsesAssemblies() {
		o.BaseSHA = req.Base
	} else {
		o.Base, o.Head, o.NoSynth = req.Base, req.Head, req.NoSynth
	}
	if req.NoDeployed {
		o.Deployed = pipeline.DeployedOff // never with pull_request_target's token, never for a fork
	}
	rep, cleanup, err := pipeline.Review(ctx, o)
	p.cleanups = append(p.cleanups, cleanup)
	return rep, err
}

// Cleanup removes what the reviews wrote (checkouts, temporary assemblies).
func (p *ReviewPipeline) Cleanup() {
	for _, c := range p.cleanups {
		c()
	}
}

// DeployInputs are the action's deploy inputs; zero values leave the configuration file's
// settings (or the defaults) in force.
type DeployInputs struct {
	Stacks, Waves   []string
	Concurrency     int
	RequireApproval string
	// Timeout bounds each stack's publishing, and again its deployment (deploy-timeout).
	Timeout time.Duration
}

// DeployPipeline is the Deployer the merge flow runs: the deploy pipeline, configured from the
// inputs and the merged commit's configuration file.
type DeployPipeline struct {
	Revision string // the merged commit
	Workdir  string // the app's directory in the checkout
	// AssemblyDir is a pre-synthesized assembly to deploy; "" synthesizes the checkout into
	// TempDir.
	AssemblyDir                  string
	InstallCommand, SynthCommand string
	Config                       string // the configuration file
	ConfigRequired               bool   // it was named: a missing file is an error
	ConfigCheckout               string // the checkout Config is read in (pipeline.LoadConfig)
	Inputs                       DeployInputs
	TempDir                      string
	Runner                       Runner
	Log                          io.Writer // synthesis output
	BuildOutput                  io.Writer // asset builds' output
	// View shows the deployment as it happens (the terminal or the Actions log).
	View func(*deployplan.Plan) pipeline.DeployView

	dir     string // the assembly deployed
	o       pipeline.DeployOptions
	settled bool
}

var _ Deployer = (*DeployPipeline)(nil)

// Assembly is the given assembly, or the checkout synthesized: the merged commit is trusted (it
// passed review and merge).
func (p *DeployPipeline) Assembly(ctx context.Context) (*assembly.Assembly, error) {
	if p.AssemblyDir != "" {
		p.dir = p.AssemblyDir
		return pipeline.LoadAssembly(p.dir)
	}
	p.dir = filepath.Join(p.TempDir, "cdkbot-deploy.out")
	p.Runner.Group("cdkbot: synthesizing " + commitid.Short(p.Revision, commitid.GitHub))
	defer p.Runner.EndGroup()
	return pipeline.Synthesize(ctx, pipeline.SynthesizeOptions{
		Dir: p.Workdir, OutDir: p.dir, InstallCommand: p.InstallCommand, SynthCommand: p.SynthCommand, Log: p.Log,
	})
}

// RequireApproval settles the deploy options from the configuration file (its deploy section and
// its policy) and the inputs: inputs win over the file, which wins over the defaults.
func (p *DeployPipeline) RequireApproval() (string, error) {
	if p.settled {
		return p.o.RequireApproval, nil
	}
	set, policy, err := pipeline.LoadDeploySettings(p.Config, p.ConfigCheckout, p.ConfigRequired)
	if err != nil {
		return "", err
	}
	o := pipeline.DeployOptions{
		Revision: p.Revision, Concurrency: 4, Waves: pipeline.DefaultWaves, RequireApproval: "never", Policy: policy,
		OutputsFile: filepath.Join(p.TempDir, "cdkbot-outputs.json"), BuildOutput: p.BuildOutput, View: p.View,
	}
	if len(set.Waves) > 0 {
		o.Waves = set.Waves
	}
	if set.Concurrency > 0 {
		o.Concurrency = set.Concurrency
	}
	if set.RequireApproval != "" {
		o.RequireApproval = set.RequireApproval
	}
	o.Stacks, o.Timeout = p.Inputs.Stacks, p.Inputs.Timeout
	if len(p.Inputs.Waves) > 0 {
		o.Waves = p.Inputs.Waves
	}
	if p.Inputs.Concurrency > 0 {
		o.Concurrency = p.Inputs.Concurrency
	}
	if p.Inputs.RequireApproval != "" {
		o.RequireApproval = p.Inputs.RequireApproval
	}
	p.o, p.settled = o, true
	return o.RequireApproval, nil
}

// Policy is the merged commit's configuration's aspects, the ones its review applied.
func (p *DeployPipeline) Policy() (*aspects.Config, error) {
	if _, err := p.RequireApproval(); err != nil {
		return nil, err
	}
	return p.o.Policy, nil
}

// Deploy runs the deploy pipeline with the templates the flow compared with the reviews.
func (p *DeployPipeline) Deploy(
	ctx context.Context, a *assembly.Assembly, req DeployRequest,
) (*deployplan.Report, error) {
	if _, err := p.RequireApproval(); err != nil {
		return nil, err
	}
	o := p.o
	o.Dir, o.Pinned, o.Running, o.OnPlan = p.dir, req.Templates, req.Running, req.OnPlan
	if req.Approved {
		o.RequireApproval = "never"
	}
	rep, err := pipeline.Deploy(ctx, a, o)
	if p.Runner != nil {
		p.Runner.Output("outputs-file", o.OutputsFile)
	}
	return rep, err
}

// SaveReportIn writes a fork's report file into dir (the runner's temporary directory) and
// returns its path.
func SaveReportIn(dir string) func(SavedReport) (string, error) {
	return func(r SavedReport) (string, error) {
		path := filepath.Join(dir, "cdkbot-report.json")
		b, err := json.Marshal(r)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return "", failure.OperationErr(err)
		}
		return path, nil
	}
}
