package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/synth"
)

// reviewOptions are the inputs of `cdkbot review`.
type reviewOptions struct {
	BaseAssembly, HeadAssembly string
	Base, Head                 string // git revisions
	AssemblyDir                string // where revisions keep their pre-synthesized assembly
	Config                     string
	Repo                       string
	FailOn                     []string
	OverrideLabel              string
	Labels                     []string          // the override label among them approves failing gates
	Approvals                  []review.Approval // who approved (the action's approval rule)
	Key                        string
	HeadSHA                    string
	BaseSHA, MergeSHA          string // the commits compared, for the marker
	Format                     string
	ShowMetadata               bool
	NoColor                    bool
	Stacks                     []string // globs selecting stacks
	InstallCommand             string   // how a revision without a committed assembly is synthesized
	SynthCommand               string
	SynthTimeout               time.Duration
	SynthInputs                []string                   // repository paths the app reads besides its directory (part of the cache key)
	SynthConcurrency           int                        // revisions synthesized at the same time
	Deployed                   string                     // compare with what runs: auto (credentials configured), off, required
	SynthUser                  string                     // run install and synthesis as this user, or BASE,HEAD users (name, uid or uid:gid); needs root
	synthUsers                 map[string]*synth.Identity // by side: base, head
	NoSynth                    bool                       // never run the app (pull_request_target)
	// BaseFailure is what a base that fails to synthesize does: "fail" (the default: the review
	// blocks, fail closed) or "first-deployment" (reviewed against nothing, with a note).
	BaseFailure     string
	BaseUnavailable string // why the base could not be read (set when it failed)
	// SecuritySeverity is the least severity that triggers security-broadening ("" is high).
	SecuritySeverity string
	Notes            []string
	Log              io.Writer
	// Ctx stops synthesis and the AWS calls when the user interrupts (nil: never).
	Ctx context.Context
}

// context is the review's context: the command's, so Ctrl-C stops synthesis and AWS calls
// (change sets are still deleted).
func (o reviewOptions) context() context.Context {
	if o.Ctx == nil {
		return context.Background()
	}
	return o.Ctx
}

func newReviewCommand(streams IO) *cobra.Command {
	opts := reviewOptions{}
	f := &format{value: "text", allowed: []string{"text", "markdown", "json"}}
	cmd := &cobra.Command{
		Use:   "review [--repo DIR --base REF --head REF | --head-assembly DIR [--base-assembly DIR]]",
		Short: "Review a change: policy, per-stack diff, compatibility and gates, as the PR comment shows them",
		Long: "review compares the base and head cloud assemblies of a change, applies the policy aspects of --config\n" +
			"to both, and evaluates the gates: exit code 1 when one fails. The assemblies are given as directories\n" +
			"(--head-assembly, --base-assembly; no base is a first deployment) or read from git: the --base and --head\n" +
			"revisions of --repo (default HEAD and its merge base with the default branch), each revision's committed\n" +
			"assembly in --assembly-dir, or else the revision synthesized (cdk.json's app). A base that fails to\n" +
			"synthesize blocks the review (--base-failure). --format markdown prints the PR comment exactly as posted.",
		Args: exactArgs(0, "no arguments (name the assemblies with --base-assembly and --head-assembly)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Format, opts.Log, opts.Ctx = f.value, streams.Err, cmd.Context()
			return runReview(streams, opts, cmd.Flags().Changed("config"), cmd.Flags().Changed("fail-on"))
		},
	}
	cmd.Flags().Var(f, "format", "output format: text, markdown or json")
	cmd.Flags().StringVar(&opts.BaseAssembly, "base-assembly", "", "the assembly of the base (what is deployed); omit for a first deployment")
	cmd.Flags().StringVar(&opts.HeadAssembly, "head-assembly", "", "the assembly of the change (required)")
	cmd.Flags().StringVar(&opts.Config, "config", ".cdkbot.yml", "the policy configuration")
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "the git repository of the change (also read for the pinned aws-cdk CLI and cdk.json)")
	cmd.Flags().StringVar(&opts.Base, "base", "", "base revision (default: the merge base of --head with the default branch)")
	cmd.Flags().StringVar(&opts.Head, "head", "", "head revision (with --repo; default HEAD)")
	cmd.Flags().StringVar(&opts.AssemblyDir, "assembly-dir", "cdk.out", "where each revision keeps its synthesized assembly, relative to the repository")
	cmd.Flags().StringSliceVar(&opts.FailOn, "fail-on", review.DefaultFailOn, "gates that fail the review: replace, destroy, orphan, destroy-stateful, security-broadening, compat-fail, policy-error, drift (with AWS credentials)")
	cmd.Flags().StringVar(&opts.OverrideLabel, "override-label", review.DefaultOverrideLabel, "the PR label that turns failing gates into warnings")
	cmd.Flags().StringSliceVar(&opts.Labels, "label", nil, "labels on the pull request (repeatable)")
	cmd.Flags().StringVar(&opts.Key, "key", "default", "identifies the comment among several reviews of one PR")
	cmd.Flags().StringVar(&opts.HeadSHA, "head-sha", "", "the commit reviewed, recorded in the comment's marker")
	cmd.Flags().BoolVar(&opts.ShowMetadata, "show-metadata", false, "show resources whose only change is their Metadata")
	cmd.Flags().BoolVar(&opts.NoColor, "no-color", false, "no colours in text output (also: NO_COLOR)")
	cmd.Flags().StringSliceVar(&opts.Stacks, "stacks", nil, "only stacks whose id, display name or stack name matches this glob (repeatable)")
	cmd.Flags().StringVar(&opts.InstallCommand, "install-command", "", "install dependencies before synthesizing (default from the lock file; none to skip)")
	cmd.Flags().StringVar(&opts.SynthCommand, "synth-command", "", "synthesize the app (default: cdk.json's app, run with CDK_OUTDIR)")
	cmd.Flags().DurationVar(&opts.SynthTimeout, "synth-timeout", 10*time.Minute, "time limit for installing and synthesizing one revision")
	cmd.Flags().StringSliceVar(&opts.SynthInputs, "synth-inputs", nil, "repository paths the app reads outside its directory (../lambda code, shared config): checked out for synthesis and part of its cache key")
	cmd.Flags().IntVar(&opts.SynthConcurrency, "synth-concurrency", 2, "revisions synthesized at the same time (base and head side by side)")
	cmd.Flags().StringVar(&opts.SynthUser, "synth-user", "", "install and synthesize as this unprivileged, dedicated user, or as BASE,HEAD (a user each; name, uid or uid:gid; cdkbot must run as root), so the app cannot read cdkbot's files, memory or tokens; every process of that user is killed afterwards")
	cmd.Flags().StringVar(&opts.SecuritySeverity, "security-severity", "high", "the least severity of a permission change that triggers security-broadening: low, medium, high or critical")
	cmd.Flags().StringVar(&opts.Deployed, "deployed", deployedAuto, "compare the base with what each stack runs in AWS (read-only, through its lookup role): auto (when AWS credentials are configured), off or required")
	cmd.Flags().StringVar(&opts.BaseFailure, "base-failure", "fail", "when the base fails to synthesize: fail (block: nobody can tell what the change destroys) or first-deployment")
	return cmd
}

func runReview(streams IO, opts reviewOptions, configGiven, failOnGiven bool) error {
	rep, cleanup, err := buildReview(opts, configGiven, failOnGiven)
	defer cleanup()
	if err != nil {
		return err
	}
	switch opts.Format {
	case "json":
		err = render.ReviewJSON(streams.Out, rep)
	case "markdown":
		err = render.ReviewMarkdown(streams.Out, rep, 0)
	default:
		err = render.ReviewText(streams.Out, rep, render.DiffOptions{ShowMetadata: opts.ShowMetadata, Color: !opts.NoColor && colorWanted(streams.Out)})
	}
	if err != nil {
		return err
	}
	if rep.Failed() {
		return &verdictError{}
	}
	return nil
}

// buildReview loads the inputs of a review and runs it; cleanup removes temporary checkouts.
func buildReview(opts reviewOptions, configGiven, failOnGiven bool) (rep *review.Report, cleanup func(), err error) {
	cleanup = func() {}
	// --repo alone reviews HEAD against its merge base with the default branch.
	gitMode := opts.Base != "" || opts.Head != "" || (opts.Repo != "" && opts.HeadAssembly == "" && opts.BaseAssembly == "")
	switch {
	case gitMode && opts.HeadAssembly != "":
		return nil, cleanup, usagef("give either git revisions (--base/--head) or assembly directories (--base-assembly/--head-assembly), not both")
	case gitMode:
		if cleanup, err = materializeRevisions(&opts); err != nil {
			return nil, cleanup, err
		}
	case opts.HeadAssembly == "":
		return nil, cleanup, usagef("name the change: --head-assembly DIR, or --repo DIR with --base REF and --head REF")
	}
	if err := review.ValidateGates(opts.FailOn); err != nil {
		return nil, cleanup, usagef("--fail-on: %v", err)
	}
	for _, g := range opts.Stacks {
		if _, err := path.Match(g, ""); err != nil {
			return nil, cleanup, usagef("--stacks %q is not a valid glob: %v", g, err)
		}
	}
	if !failOnGiven {
		opts.FailOn = review.DefaultFailOn
	}
	if _, err := cfndiff.ParseSeverity(opts.SecuritySeverity); err != nil {
		return nil, cleanup, usagef("--security-severity: %v", err)
	}
	switch opts.BaseFailure {
	case "", "fail", "first-deployment":
	default:
		return nil, cleanup, usagef("--base-failure %q: use fail (block the review) or first-deployment (review against nothing)", opts.BaseFailure)
	}
	head, err := loadAssembly(opts.HeadAssembly)
	if err != nil {
		return nil, cleanup, err
	}
	var base *assembly.Assembly
	if opts.BaseAssembly != "" {
		if base, err = loadAssembly(opts.BaseAssembly); err != nil {
			return nil, cleanup, err
		}
	}
	var policy *aspects.Config
	raw, err := os.ReadFile(opts.Config)
	switch {
	case err == nil:
		if policy, err = aspects.ParseConfig(opts.Config, raw); err != nil {
			return nil, cleanup, &inputError{err}
		}
	case errors.Is(err, fs.ErrNotExist) && !configGiven:
	default:
		return nil, cleanup, usagef("--config %s: %v", opts.Config, err)
	}
	var facts compat.RepoFacts
	if opts.Repo != "" {
		if facts, err = readRepoFacts(opts.Repo); err != nil {
			return nil, cleanup, err
		}
	}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	reader, running, err := readDeployed(opts.context(), opts.Deployed, head, stackFilter(opts.Stacks), logf)
	if err != nil {
		return nil, cleanup, err
	}
	in := review.Input{Base: base, Head: head, Policy: policy, Repo: facts, ToolSchemaMax: assembly.Schema().MaxMajor, Deployed: running,
		FailOn: opts.FailOn, OverrideLabel: opts.OverrideLabel, Approvals: approvalsOf(opts), Key: opts.Key, HeadSHA: opts.HeadSHA,
		BaseSHA: opts.BaseSHA, MergeSHA: opts.MergeSHA, Notes: opts.Notes, BaseUnavailable: opts.BaseUnavailable, SecurityMinimum: opts.SecuritySeverity,
		Keep: stackFilter(opts.Stacks)}
	rep, err = review.Run(in)
	if err == nil && reader != nil {
		// CloudFormation's own verdicts on the stacks the change touches, then the review again
		// with them (it takes milliseconds; the change sets take seconds).
		var notes []string
		in.Verdicts, in.Drift, notes = askCloudFormation(opts.context(), reader, rep, head, running, opts.HeadSHA, logf)
		if len(in.Verdicts) > 0 || len(in.Drift) > 0 || len(notes) > 0 {
			in.Notes = append(slices.Clone(in.Notes), notes...)
			rep, err = review.Run(in)
		}
	}
	if err != nil {
		return nil, cleanup, &inputError{err}
	}
	return rep, cleanup, nil
}

// approvalsOf is the approvals a review counts: the action's, or on the command line the
// override label among --label (nobody is asked who applied it there).
func approvalsOf(opts reviewOptions) []review.Approval {
	out := opts.Approvals
	label := opts.OverrideLabel
	if label == "" {
		label = review.DefaultOverrideLabel
	}
	if slices.Contains(opts.Labels, label) {
		out = append(out, review.Approval{Via: "label " + label})
	}
	return out
}

// materializeRevisions reads the pre-synthesized assembly of the base and head revisions out of
// git into temporary directories and points the options at them.
func materializeRevisions(opts *reviewOptions) (cleanup func(), err error) {
	cleanup = func() {}
	dir := opts.Repo
	if dir == "" {
		dir = "."
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return cleanup, usagef("%v", err)
	}
	// A shallow clone (actions/checkout's default depth 1) may lack the base: fetch it.
	if repo.Shallow() {
		for _, rev := range []string{opts.Base, opts.Head} {
			if rev == "" {
				continue
			}
			if _, err := repo.Resolve(rev); err != nil {
				if opts.Log != nil {
					fmt.Fprintf(opts.Log, "cdkbot: %s is not in this shallow clone; fetching history\n", rev)
				}
				if err := repo.Deepen(); err != nil {
					return cleanup, &operationError{err}
				}
				break
			}
		}
	}
	if opts.Head == "" {
		opts.Head = "HEAD"
	}
	if opts.Base == "" {
		def := repo.DefaultBranch()
		if opts.Base, err = repo.MergeBase(def, opts.Head); err != nil {
			return cleanup, usagef("no --base given and %v", err)
		}
	}
	if opts.synthUsers, err = parseSynthUsers(opts.SynthUser); err != nil {
		return cleanup, err
	}
	tmp, err := os.MkdirTemp("", "cdkbot-review-")
	if err != nil {
		return cleanup, &operationError{err}
	}
	cleanup = func() { os.RemoveAll(tmp) }
	if opts.synthUsers != nil {
		// The synthesis user passes through to its own checkout; it cannot list the others.
		if err := os.Chmod(tmp, 0o711); err != nil {
			return cleanup, &operationError{err}
		}
		if err := privateGitConfig(repo.Root(), opts.Log); err != nil {
			return cleanup, &operationError{err}
		}
	}
	// First, one side after the other (go-git reads are not made for concurrency): each
	// revision's committed assembly, its cached one, or its inputs checked out to synthesize.
	var jobs []*synthJob
	for _, side := range []struct {
		name, rev string
		dst       *string
	}{{"base", opts.Base, &opts.BaseAssembly}, {"head", opts.Head, &opts.HeadAssembly}} {
		sha, err := repo.Resolve(side.rev)
		if err != nil {
			return cleanup, usagef("%v", err)
		}
		if side.name == "head" && opts.HeadSHA == "" {
			opts.HeadSHA = sha
		}
		if side.name == "base" && opts.BaseSHA == "" {
			opts.BaseSHA = sha
		}
		out := filepath.Join(tmp, side.name)
		if err := os.MkdirAll(out, 0o755); err != nil {
			return cleanup, &operationError{err}
		}
		err = repo.Materialize(sha, opts.AssemblyDir, out)
		switch {
		case err == nil:
			*side.dst = out
			continue
		case !errors.Is(err, gitrepo.ErrNoSuchPath):
			return cleanup, &operationError{fmt.Errorf("read %s at %s: %w", opts.AssemblyDir, side.rev, err)}
		case opts.NoSynth:
			return cleanup, usagef("revision %s (%s) has no %s, and synthesizing pull request code is not allowed here", side.rev, sha[:12], opts.AssemblyDir)
		}
		job, err := prepareSynth(repo, sha, dir, tmp, side.name, *opts)
		if err != nil {
			return cleanup, usagef("revision %s (%s) has no %s and cannot be synthesized: %v", side.rev, sha[:12], opts.AssemblyDir, err)
		}
		job.rev, job.dst = side.rev, side.dst
		if job.cached != "" {
			*side.dst = job.cached
			continue
		}
		if len(jobs) == 1 && jobs[0].key == job.key {
			// The change touches none of the app's inputs: one synthesis serves both sides.
			if opts.Log != nil {
				fmt.Fprintf(opts.Log, "cdkbot: head (%s) has the same inputs as the base (none of %s changed): synthesizing once\n",
					sha[:12], describeInputs(job.appRel, opts.SynthInputs))
			}
			jobs[0].also = job
			continue
		}
		if err := job.checkout(repo); err != nil {
			return cleanup, usagef("revision %s (%s) cannot be checked out to synthesize: %v", side.rev, sha[:12], err)
		}
		jobs = append(jobs, job)
	}
	if err := runSynthJobs(jobs, *opts); err != nil {
		return cleanup, &operationError{err}
	}
	for _, job := range slices.Clone(jobs) {
		var synthErr *synth.Error
		if job.appRel != "" && errors.As(job.err, &synthErr) {
			job.err = fmt.Errorf("%w\n(only %s are checked out for synthesis: if the app reads other files of the repository, "+
				"name them with --synth-inputs, the action's synth-inputs)", job.err, describeInputs(job.appRel, opts.SynthInputs))
		}
		if job.also != nil {
			job.also.out, job.also.err = job.out, job.err
			jobs = append(jobs, job.also)
		}
	}
	for _, job := range jobs {
		err := job.err
		switch {
		case err == nil:
			*job.dst = job.out
		case job.name == "base" && opts.BaseFailure == "first-deployment":
			// Opted in: reviewed as if nothing were deployed; the review says so.
			*job.dst = ""
			opts.Notes = append(opts.Notes, fmt.Sprintf("The base (%s) failed to synthesize, so this review compares against an empty assembly: "+
				"every resource shows as created (base-failure: first-deployment). %v", job.sha[:12], firstLine(err)))
		case job.name == "base":
			// Fail closed: without the base nobody can tell what the change destroys. The review
			// still shows the head, and blocks.
			*job.dst = ""
			opts.BaseUnavailable = fmt.Sprintf("the base %s failed to synthesize: %s", job.sha[:12], firstLine(err))
		case errors.As(err, new(*synth.Error)):
			return cleanup, &operationError{fmt.Errorf("the head (%s) failed to synthesize: %w", job.sha[:12], err)}
		default:
			return cleanup, usagef("revision %s (%s) has no %s and cannot be synthesized: %v. Commit the assembly, set --synth-command, "+
				"or pass --base-assembly/--head-assembly", job.rev, job.sha[:12], opts.AssemblyDir, err)
		}
	}
	if opts.Repo == "" {
		opts.Repo = repo.Root()
	}
	return cleanup, nil
}

// guardBase fingerprints the base assembly before the head's app runs; the check it returns
// fails, and removes the base (it may sit in the cache), if anything changed it since: pull
// request code must not rewrite what it is compared against.
func guardBase(dir string) (check func() error, err error) {
	before, err := synth.Fingerprint(dir)
	if err != nil {
		return nil, err
	}
	return func() error {
		if after, err := synth.Fingerprint(dir); err == nil && after == before {
			return nil
		}
		os.RemoveAll(dir) // tainted: never reused
		return fmt.Errorf("the base assembly (%s) changed while the head was synthesized: the pull request's app wrote to it, "+
			"so nothing can be compared; synthesize as another user (--synth-user, the action's synth-user)", dir)
	}, nil
}

// unvalidated marks a cached assembly synthesized without aws-cdk-lib's template validation.
const unvalidated = "-unvalidated"

// synthJob is one revision to synthesize: prepared one after the other, run side by side.
type synthJob struct {
	name, rev, sha string
	dst            *string
	src, appDir    string    // the checkout of the app's inputs, and the app's directory in it
	appRel         string    // the app's directory in the repository ("" for its root)
	inputs         []string  // the repository paths checked out for it
	also           *synthJob // the head, when its inputs are the base's: it gets this result
	key            string    // what the synthesis reads, as a cache key
	cached         string    // an assembly synthesized earlier from the same inputs
	store          string    // where to cache the result ("" without a cache)
	out            string    // the assembly, once synthesized
	err            error
}

// synthInputs lists what a synthesis of the app at appRel may read, as repository paths: the
// app's directory, the workspace files above it, and what the user adds (--synth-inputs).
// Only these are checked out, so the cache key (their git ids) covers everything the app
// can see: an app that reads elsewhere fails to synthesize instead of being reused stale.
func synthInputs(appRel string, extra []string) []string {
	paths := []string{appRel}
	if appRel != "" {
		for d := path.Dir(appRel); ; d = path.Dir(d) {
			if d == "." {
				d = ""
			}
			for _, f := range synth.WorkspaceFiles() {
				paths = append(paths, path.Join(d, f))
			}
			if d == "" {
				break
			}
		}
	}
	for _, e := range extra {
		if e = strings.Trim(path.Clean("/"+filepath.ToSlash(e)), "/"); e != "" || appRel != "" {
			paths = append(paths, e)
		}
	}
	return paths
}

// prepareSynth finds a revision's assembly in the cache, keyed by the git ids of what its
// synthesis reads, or checks those inputs out, into a directory only its synthesis user may open.
func prepareSynth(repo *gitrepo.Repo, sha, dir, tmp, name string, opts reviewOptions) (*synthJob, error) {
	appRel, err := filepath.Rel(realPath(repo.Root()), realPath(dir))
	if err != nil || strings.HasPrefix(appRel, "..") || appRel == "." {
		appRel = ""
	}
	appRel = filepath.ToSlash(appRel)
	inputs := synthInputs(appRel, opts.SynthInputs)
	h := sha256.New()
	fmt.Fprintf(h, "cdkbot synth v1\x00%s\x00%s\x00%s\x00", opts.InstallCommand, opts.SynthCommand, appRel)
	ids, err := repo.ObjectIDs(sha, inputs)
	if err != nil {
		return nil, err
	}
	for i, p := range inputs {
		fmt.Fprintf(h, "%s=%s\x00", p, ids[i])
	}
	job := &synthJob{name: name, sha: sha, key: hex.EncodeToString(h.Sum(nil))[:32], appRel: appRel}
	if root := cacheRoot(); root != "" {
		job.store = filepath.Join(root, "assemblies", job.key)
		// A base may reuse an assembly synthesized without template validation; a head may not.
		candidates := []string{job.store}
		if name == "base" {
			candidates = append(candidates, job.store+unvalidated)
		}
		for _, c := range candidates {
			if _, err := os.Stat(filepath.Join(c, "manifest.json")); err == nil {
				if opts.Log != nil {
					fmt.Fprintf(opts.Log, "cdkbot: %s (%s): reused the assembly synthesized from the same inputs (key %s): none of %s changed\n",
						name, sha[:12], job.key[:12], describeInputs(appRel, opts.SynthInputs))
				}
				job.cached = c
				return job, nil
			}
		}
	}
	job.inputs = inputs
	job.src = filepath.Join(tmp, name+"-src")
	job.appDir = filepath.Join(job.src, filepath.FromSlash(appRel))
	job.out = filepath.Join(tmp, name+"-synth")
	return job, nil
}

// checkout writes the job's inputs at its revision into a directory of its own.
func (j *synthJob) checkout(repo *gitrepo.Repo) error {
	if err := os.Mkdir(j.src, 0o700); err != nil {
		return err
	}
	if err := repo.MaterializePaths(j.sha, j.inputs, j.src); err != nil {
		return err
	}
	if _, err := os.Stat(j.appDir); err != nil {
		return fmt.Errorf("%s has no %s", j.sha[:12], j.appRel)
	}
	return nil
}

// realPath is p absolute with its symbolic links resolved (a relative --repo, /tmp on macOS),
// or p when it cannot be resolved.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

func describeInputs(appRel string, extra []string) string {
	what := "the app's directory"
	if appRel != "" {
		what = appRel + "/ (with the workspace files above it)"
	}
	if len(extra) > 0 {
		what += ", " + strings.Join(extra, ", ")
	}
	return what
}

// runSynthJobs synthesizes the revisions, up to --synth-concurrency at a time. Side by side
// only when each side runs as a user of its own: as one user the head's app could rewrite the
// base's assembly before it is fingerprinted, so then the base goes first and is fingerprinted
// before the head's app starts.
func runSynthJobs(jobs []*synthJob, opts reviewOptions) error {
	limit := max(opts.SynthConcurrency, 1)
	if b, h := opts.synthUsers["base"], opts.synthUsers["head"]; limit > 1 && (b == nil || h == nil || b.UID == h.UID) {
		limit = 1
		if opts.Log != nil && len(jobs) > 1 {
			fmt.Fprintln(opts.Log, "cdkbot: synthesizing the base, then the head: side by side needs a synthesis user for each (--synth-user BASE,HEAD, as root)")
		}
	}
	var base *synthJob
	for _, j := range jobs {
		if j.name == "base" {
			base = j
		}
	}
	var baseCheck func() error // the base assembly's fingerprint, taken before the head's app may touch it
	if base == nil && opts.BaseAssembly != "" {
		var err error
		if baseCheck, err = guardBase(opts.BaseAssembly); err != nil {
			return err
		}
	}
	var g errgroup.Group
	g.SetLimit(limit) // with a limit of 1 the head starts only once the base's goroutine is done
	logs := newSideLogs(opts.Log, len(jobs) > 1 && limit > 1)
	var guardErr error
	for _, j := range jobs {
		// The base's template-validation findings are about what is merged already; nobody acts
		// on them. Unless the same synthesis also serves as the head.
		skipValidation := j.name == "base" && j.also == nil
		if skipValidation && j.store != "" {
			j.store += unvalidated
		}
		g.Go(func() error {
			j.err = synth.Run(opts.context(), synth.Options{Dir: j.appDir, Root: j.src, OutDir: j.out, InstallCommand: opts.InstallCommand,
				SynthCommand: opts.SynthCommand, Timeout: opts.SynthTimeout, Env: os.Environ(), CacheDir: nodeModulesCache(),
				ReadOnlyCache: j.name != "base", Log: logs.side(j.name), User: opts.synthUsers[j.name],
				SkipTemplateValidation: skipValidation})
			if j == base && j.err == nil && len(jobs) > 1 {
				// Fingerprinted as soon as it exists; the head's app may still be running.
				baseCheck, guardErr = guardBase(j.out)
			}
			return nil
		})
	}
	g.Wait()
	logs.flush()
	if guardErr == nil && baseCheck != nil {
		guardErr = baseCheck() // whether the head's app succeeded or not; a changed base is removed
	}
	for _, j := range jobs {
		if j.err == nil && j.store != "" && !(j == base && guardErr != nil) {
			if err := os.MkdirAll(filepath.Dir(j.store), 0o755); err == nil && os.Rename(j.out, j.store) == nil {
				j.out = j.store
				// Readable by others: actions/cache saves the cache as the runner's user.
				_ = shareReadable(j.store)
			}
		}
	}
	return guardErr
}

// shareReadable lets anyone read a tree (never write it): an assembly is no secret, and the
// Actions cache saves it as the runner's user, not as the root of the container.
func shareReadable(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		add := fs.FileMode(0o044)
		if d.IsDir() {
			add = 0o055
		}
		return os.Chmod(p, fi.Mode().Perm()|add)
	})
}

// cacheRoot is where cdkbot keeps what it may reuse (assemblies by inputs, dependencies by lock
// file), "" when the machine gives no cache directory.
func cacheRoot() string {
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "cdkbot")
	}
	return ""
}

// nodeModulesCache is where installed dependencies are kept by lock file, "" without a cache.
func nodeModulesCache() string {
	if root := cacheRoot(); root != "" {
		return filepath.Join(root, "node_modules")
	}
	return ""
}

func firstLine(err error) string {
	var se *synth.Error
	if errors.As(err, &se) {
		return se.Summary()
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// parseSynthUsers reads --synth-user: one user for both revisions, or BASE,HEAD so that the two
// never share a uid ("" or none: no synthesis user).
func parseSynthUsers(spec string) (map[string]*synth.Identity, error) {
	if spec == "" || spec == "none" {
		return nil, nil
	}
	parts := strings.Split(spec, ",")
	if len(parts) > 2 {
		return nil, usagef("--synth-user %q: give one user, or two (base,head)", spec)
	}
	base, err := parseIdentity(strings.TrimSpace(parts[0]))
	if err != nil {
		return nil, err
	}
	head := base
	if len(parts) == 2 {
		if head, err = parseIdentity(strings.TrimSpace(parts[1])); err != nil {
			return nil, err
		}
		if head.UID == base.UID {
			return nil, usagef("--synth-user %q: the base and head users must differ", spec)
		}
	}
	return map[string]*synth.Identity{"base": base, "head": head}, nil
}

// parseIdentity reads one user: a name, a uid, or uid:gid.
func parseIdentity(spec string) (*synth.Identity, error) {
	bad := func(why string) error {
		return usagef("--synth-user %q: %s; give a user name, a uid or uid:gid", spec, why)
	}
	uidText, gidText, hasGID := strings.Cut(spec, ":")
	if uid, err := strconv.ParseUint(uidText, 10, 32); err == nil {
		gid := uid
		if hasGID {
			g, err := strconv.ParseUint(gidText, 10, 32)
			if err != nil {
				return nil, bad("the group is not a number")
			}
			gid = g
		}
		if uid == 0 {
			return nil, bad("uid 0 is root, which is no sandbox")
		}
		return &synth.Identity{UID: uint32(uid), GID: uint32(gid)}, nil
	}
	if hasGID {
		return nil, bad("uid:gid must be numbers")
	}
	u, err := user.Lookup(spec)
	if err != nil {
		return nil, bad("no such user")
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, bad("its ids are not numeric")
	}
	if uid == 0 {
		return nil, bad("it is root, which is no sandbox")
	}
	return &synth.Identity{UID: uint32(uid), GID: uint32(gid)}, nil
}

// privateGitConfig makes the repository's .git/config readable by its owner alone before pull
// request code runs: actions/checkout keeps the workflow's token there (an http extraheader)
// unless persist-credentials is false, and the file is world-readable.
func privateGitConfig(root string, log io.Writer) error {
	path := filepath.Join(root, ".git", "config")
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
		return nil // no such file (a worktree, a bare copy), or already private
	}
	if err := os.Chmod(path, fi.Mode().Perm()&^0o077); err != nil {
		return fmt.Errorf("make %s private before running pull request code: %w", path, err)
	}
	if log != nil {
		fmt.Fprintf(log, "cdkbot: made %s private (it may hold the checkout's token; check out with persist-credentials: false)\n", path)
	}
	return nil
}
