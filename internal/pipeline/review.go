package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/checkout"
	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/synth"
)

// ReviewOptions are the inputs of a review, whichever door it comes through (`cdkbot review`,
// the pre-push hook, the action's reviewer). Nothing here knows of flags or environment variables.
type ReviewOptions struct {
	BaseAssembly, HeadAssembly string
	Base, Head                 string // git revisions
	AssemblyDir                string // where revisions keep their pre-synthesized assembly
	Config                     string
	// ConfigRequired makes a missing Config an error (it was named, not defaulted).
	ConfigRequired bool
	// ConfigCheckout is a directory of the checkout Config belongs to, read as LoadConfig says
	// (never through a link out of it); "" when the user named Config on the command line.
	ConfigCheckout string
	// ConfigFromHead reads Config (not named, the default .cdkbot.yml) from the head revision,
	// in the app's directory, when the review reads git revisions: the policy of the change
	// under review, wherever cdkbot runs from (not the working tree of the current directory).
	ConfigFromHead    bool
	Repo              string
	FailOn            []string
	OverrideLabel     string
	Labels            []string          // the override label among them approves failing gates
	Approvals         []review.Approval // who approved (the action's approval rule)
	Key               string
	HeadSHA           string
	BaseSHA, MergeSHA string   // the commits compared, for the marker
	Stacks            []string // globs selecting stacks
	InstallCommand    string   // how a revision without a committed assembly is synthesized
	SynthCommand      string
	SynthTimeout      time.Duration
	SynthInputs       []string // repository paths the app reads besides its directory (part of the cache key)
	SynthConcurrency  int      // revisions synthesized at the same time
	Deployed          string   // compare with what runs: auto (credentials configured), off, required
	// Context is given to the app as the CDK CLI's -c key=value (part of the cache key): one
	// environment of an app (stage=prod).
	Context map[string]string
	// SynthUser runs install and synthesis as this user, or BASE,HEAD users (name, uid or
	// uid:gid), switched to as root or through passwordless sudo; "none" runs the app as
	// cdkbot's own user.
	SynthUser string
	// PullRequestCode says the revisions are someone else's change (the action's reviews): they
	// are synthesized only as synthesis users (SynthUser, else DefaultSynthUsers, created where
	// cdkbot may), or with SynthUser "none", which the log and the review's notes then call
	// out; elsewhere it is refused. Without it (`cdkbot review`, the hook) the code is the
	// user's own, and runs as them unless SynthUser says otherwise.
	PullRequestCode bool
	// Host is the machine the sandbox is chosen on: who cdkbot runs as, sudo, the users (nil:
	// this machine).
	Host       Host
	synthUsers map[string]*synth.Identity // by side: base, head
	headRev    string                     // the head commit read from git, when the review reads git
	sudo       bool                       // the synthesis users are reached through sudo
	cache      string                     // where assemblies and dependencies are cached ("" for no cache)
	NoSynth    bool                       // never run the app (pull_request_target)
	// CommittedHead lets the head revision's committed assembly (AssemblyDir) stand in for
	// synthesizing it; the log and the review's notes say when it did. For local use only (`cdkbot
	// review --repo`, the hook): a pull request's committed assembly says whatever its author
	// wrote, so the action always synthesizes the head. The base may always use its own.
	CommittedHead bool
	// BaseFailure is what a base that fails to synthesize does: "fail" (the default: the review
	// blocks, fail closed) or "first-deployment" (reviewed against nothing, with a note).
	BaseFailure     string
	BaseUnavailable string // why the base could not be read (set when it failed)
	// SecuritySeverity is the least severity that triggers security-broadening ("" is high).
	SecuritySeverity string
	Notes            []string
	Log              io.Writer
	// ShowAssetChanges lists the resources whose only change is an asset's hash; the views fold
	// them into a count per stack otherwise (asset-changes).
	ShowAssetChanges bool
	// Comment is how the action posts the review (CommentSticky, CommentNew, CommentChanges,
	// CommentOff); ResultLabels sets and clears the pull request's result labels. The review
	// itself does not read them: the action's flows do.
	Comment      string
	ResultLabels bool
}

// Review loads the inputs of a review and runs it: the assemblies given, or the revisions read
// from git and synthesized in a sandbox (with a cache), then what runs in AWS, then the review
// use case. cleanup removes temporary checkouts; call it once the report is rendered.
func Review(ctx context.Context, opts ReviewOptions) (rep *review.Report, cleanup func(), err error) {
	cleanup = func() {}
	// The settings first: a bad one is said before any revision is read or synthesized.
	if err := review.ValidateGates(opts.FailOn); err != nil {
		return nil, cleanup, failure.Usagef("--fail-on: %v", err)
	}
	for _, g := range opts.Stacks {
		if _, err := path.Match(g, ""); err != nil {
			return nil, cleanup, failure.Usagef("--stacks %q is not a valid glob: %v", g, err)
		}
	}
	if opts.FailOn == nil {
		opts.FailOn = review.DefaultFailOn
	}
	if _, err := cfndiff.ParseSeverity(opts.SecuritySeverity); err != nil {
		return nil, cleanup, failure.Usagef("--security-severity: %v", err)
	}
	switch opts.BaseFailure {
	case "", "fail", "first-deployment":
	default:
		return nil, cleanup, failure.Usagef("--base-failure %q: use fail (block the review) "+
			"or first-deployment (review against nothing)", opts.BaseFailure)
	}
	// --repo alone reviews HEAD against its merge base with the default branch.
	gitMode := opts.Base != "" || opts.Head != "" ||
		(opts.Repo != "" && opts.HeadAssembly == "" && opts.BaseAssembly == "")
	switch {
	case gitMode && opts.HeadAssembly != "":
		return nil, cleanup, failure.Usagef("give either git revisions (--base/--head) or assembly directories " +
			"(--base-assembly/--head-assembly), not both")
	case gitMode:
		if cleanup, err = materializeRevisions(ctx, &opts); err != nil {
			return nil, cleanup, err
		}
	case opts.HeadAssembly == "":
		return nil, cleanup, failure.Usagef("name the change: --head-assembly DIR, " +
			"or --repo DIR with --base REF and --head REF")
	}
	head, err := LoadAssembly(opts.HeadAssembly)
	if err != nil {
		return nil, cleanup, err
	}
	var base *assembly.Assembly
	if opts.BaseAssembly != "" {
		if base, err = LoadAssembly(opts.BaseAssembly); err != nil {
			return nil, cleanup, err
		}
	}
	if err := CheckStacksMatch(opts.Stacks, head, base); err != nil {
		return nil, cleanup, err
	}
	var policy *aspects.Config
	if opts.ConfigFromHead && opts.headRev != "" && !opts.ConfigRequired {
		policy, err = loadRevisionConfig(opts.Repo, opts.headRev, opts.Config)
	} else {
		policy, _, _, err = LoadConfig(opts.Config, opts.ConfigCheckout, opts.ConfigRequired)
	}
	if err != nil {
		return nil, cleanup, err
	}
	var facts compat.RepoFacts
	switch {
	case gitMode: // the revision under review's pins, not the working tree's
		if facts, err = ReadRevisionFacts(opts.Repo, opts.Head); err != nil {
			return nil, cleanup, err
		}
	case opts.Repo != "":
		if facts, err = ReadRepoFacts(opts.Repo); err != nil {
			return nil, cleanup, err
		}
	}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	reader, running, err := readDeployed(ctx, opts.Deployed, head, StackFilter(opts.Stacks), logf)
	if err != nil {
		return nil, cleanup, err
	}
	in := review.Input{
		Base: base, Head: head, Policy: policy, Repo: facts, ToolSchemaMax: assembly.Schema().MaxMajor,
		Deployed: running, Keep: StackFilter(opts.Stacks),
		FailOn: opts.FailOn, SecurityMinimum: opts.SecuritySeverity,
		OverrideLabel: opts.OverrideLabel, Approvals: approvalsOf(opts),
		Key: opts.Key, HeadSHA: opts.HeadSHA, BaseSHA: opts.BaseSHA, MergeSHA: opts.MergeSHA,
		Notes: opts.Notes, BaseUnavailable: opts.BaseUnavailable, HeadGiven: !gitMode,
		ShowAssetChanges: opts.ShowAssetChanges,
	}
	rep, err = review.Run(in)
	if err == nil && reader != nil {
		// CloudFormation's own verdicts on the stacks the change touches, then the review again
		// with them (it takes milliseconds; the change sets take seconds).
		var notes []string
		in.Verdicts, in.Drift, notes = askCloudFormation(ctx, reader, rep, head, running, opts.HeadSHA, logf)
		if len(in.Verdicts) > 0 || len(in.Drift) > 0 || len(notes) > 0 {
			in.Notes = append(slices.Clone(in.Notes), notes...)
			rep, err = review.Run(in)
		}
	}
	if err != nil {
		return nil, cleanup, failure.InputErr(err)
	}
	return rep, cleanup, nil
}

// approvalsOf is the approvals a review counts: the action's, or on the command line the
// override label among --label (nobody is asked who applied it there).
func approvalsOf(opts ReviewOptions) []review.Approval {
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
func materializeRevisions(ctx context.Context, opts *ReviewOptions) (cleanup func(), err error) {
	cleanup = func() {}
	dir := opts.Repo
	if dir == "" {
		dir = "."
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return cleanup, failure.Usagef("%v", err)
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
					return cleanup, failure.OperationErr(err)
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
			return cleanup, failure.Usagef("no --base given and %v", err)
		}
		if head, err := repo.Resolve(opts.Head); err == nil && head == opts.Base && opts.Log != nil {
			// On the default branch itself the merge base is the head: say why nothing changes.
			fmt.Fprintf(opts.Log, "cdkbot: %s is on %s, its own merge base: nothing to compare; give --base "+
				"(e.g. --base %s~1) to review its last commit\n", opts.Head, def, opts.Head)
		}
	}
	if !opts.NoSynth {
		if err := chooseSandbox(ctx, opts); err != nil {
			return cleanup, err
		}
	}
	tmp, err := os.MkdirTemp("", "cdkbot-review-")
	if err != nil {
		return cleanup, failure.OperationErr(err)
	}
	cleanup = func() { os.RemoveAll(tmp) }
	if opts.synthUsers != nil {
		// The synthesis user passes through to its own checkout; it cannot list the others.
		if err := os.Chmod(tmp, 0o711); err != nil {
			return cleanup, failure.OperationErr(err)
		}
		if err := privateGitConfig(repo.Root(), opts.Log); err != nil {
			return cleanup, failure.OperationErr(err)
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
			return cleanup, failure.Usagef("%v", err)
		}
		if side.name == "head" {
			opts.headRev = sha
		}
		if side.name == "head" && opts.HeadSHA == "" {
			opts.HeadSHA = sha
		}
		if side.name == "base" && opts.BaseSHA == "" {
			opts.BaseSHA = sha
		}
		out := filepath.Join(tmp, side.name)
		if err := os.MkdirAll(out, 0o755); err != nil {
			return cleanup, failure.OperationErr(err)
		}
		// The head's committed assembly is never looked at unless allowed: it is what the change's
		// author says its app makes, not what it makes.
		committed := side.name == "base" || opts.CommittedHead
		if committed {
			err = repo.Materialize(sha, opts.AssemblyDir, out)
			switch {
			case err == nil:
				*side.dst = out
				if side.name == "head" {
					usedCommittedHead(opts, sha)
				}
				continue
			case !errors.Is(err, gitrepo.ErrNoSuchPath):
				return cleanup, failure.OperationErr(fmt.Errorf("read %s at %s: %w", opts.AssemblyDir, side.rev, err))
			}
		}
		switch {
		case opts.NoSynth && !committed:
			return cleanup, failure.Usagef("revision %s (%s) is the change under review, "+
				"and synthesizing pull request code is not allowed here; its committed %s is never reviewed "+
				"in place of synthesis: pass head-assembly synthesized by a trusted job",
				side.rev, commitid.Short(sha, commitid.Unambiguous), opts.AssemblyDir)
		case opts.NoSynth:
			return cleanup, failure.Usagef("revision %s (%s) has no %s, and synthesizing pull request code is not allowed here",
				side.rev, commitid.Short(sha, commitid.Unambiguous), opts.AssemblyDir)
		}
		job, err := prepareSynth(repo, sha, dir, tmp, side.name, *opts)
		if err != nil {
			return cleanup, failure.Usagef("revision %s (%s) %s: %v",
				side.rev, commitid.Short(sha, commitid.Unambiguous), cannotSynthesize(*opts, committed), err)
		}
		job.rev, job.dst, job.committed = side.rev, side.dst, committed
		if job.cached != "" {
			*side.dst = job.cached
			continue
		}
		if len(jobs) == 1 && jobs[0].key == job.key {
			// The change touches none of the app's inputs: one synthesis serves both sides.
			if opts.Log != nil {
				fmt.Fprintf(opts.Log, "cdkbot: head (%s) has the same inputs as the base (none of %s changed): synthesizing once\n",
					commitid.Short(sha, commitid.Unambiguous), describeInputs(job.appRel, opts.SynthInputs))
			}
			jobs[0].also = job
			continue
		}
		if err := job.checkout(repo); err != nil {
			return cleanup, failure.Usagef("revision %s (%s) cannot be checked out to synthesize: %v",
				side.rev, commitid.Short(sha, commitid.Unambiguous), err)
		}
		jobs = append(jobs, job)
	}
	if len(jobs) > 0 {
		announceSandbox(opts)
	}
	if err := runSynthJobs(ctx, jobs, *opts); err != nil {
		return cleanup, failure.OperationErr(err)
	}
	for _, job := range slices.Clone(jobs) {
		var synthErr *synth.Error
		if errors.As(job.err, &synthErr) {
			job.err = fmt.Errorf("%w\n(%s)", job.err, readsElsewhereHint(job.appRel, opts.SynthInputs))
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
			opts.Notes = append(opts.Notes, fmt.Sprintf("The base (%s) failed to synthesize, "+
				"so this review compares against an empty assembly: "+
				"every resource shows as created (base-failure: first-deployment). %v",
				commitid.Short(job.sha, commitid.Unambiguous), firstLine(err)))
		case job.name == "base":
			// Fail closed: without the base nobody can tell what the change destroys. The review
			// still shows the head, and blocks.
			*job.dst = ""
			opts.BaseUnavailable = fmt.Sprintf("the base %s failed to synthesize: %s",
				commitid.Short(job.sha, commitid.Unambiguous), firstLine(err))
		case errors.As(err, new(*checkout.RefusedError)):
			// A file of the head that cdkbot will not read (a link out of the checkout, a device):
			// input to fix, not an option to set.
			return cleanup, failure.InputErr(fmt.Errorf("the head (%s) cannot be synthesized: %w",
				commitid.Short(job.sha, commitid.Unambiguous), err))
		case errors.As(err, new(*synth.Error)):
			return cleanup, failure.OperationErr(fmt.Errorf("the head (%s) failed to synthesize: %w",
				commitid.Short(job.sha, commitid.Unambiguous), err))
		case job.committed:
			return cleanup, failure.Usagef("revision %s (%s) %s: %v. "+
				"Commit the assembly, set --synth-command, or pass --base-assembly/--head-assembly",
				job.rev, commitid.Short(job.sha, commitid.Unambiguous), cannotSynthesize(*opts, true), err)
		default:
			return cleanup, failure.Usagef("revision %s (%s) %s: %v. "+
				"Set synth-command (--synth-command), or pass head-assembly (--head-assembly) synthesized by a trusted job",
				job.rev, commitid.Short(job.sha, commitid.Unambiguous), cannotSynthesize(*opts, false), err)
		}
	}
	if opts.Repo == "" {
		opts.Repo = repo.Root()
	}
	return cleanup, nil
}

// usedCommittedHead says, in the log and in the review, that the head is its committed assembly
// rather than what its app makes.
func usedCommittedHead(opts *ReviewOptions, sha string) {
	short := commitid.Short(sha, commitid.Unambiguous)
	if opts.Log != nil {
		fmt.Fprintf(opts.Log, "cdkbot: head (%s): used the committed %s instead of synthesizing\n", short, opts.AssemblyDir)
	}
	opts.Notes = append(opts.Notes, fmt.Sprintf("The head (%s) is the %s committed in it, not synthesized by cdkbot: "+
		"this review shows what that assembly says, which may not be what the app makes.", short, opts.AssemblyDir))
}

// cannotSynthesize is why a revision has no assembly: it has none committed (or its committed
// one was not looked at), and it cannot be synthesized.
func cannotSynthesize(opts ReviewOptions, committed bool) string {
	if committed {
		return "has no " + opts.AssemblyDir + " and cannot be synthesized"
	}
	return "cannot be synthesized (a committed " + opts.AssemblyDir +
		" is never reviewed in place of the head's synthesis)"
}

// The review's defaults, the same through every door.
var (
	// DefaultFailOn are the gates that fail a review unless configured otherwise.
	DefaultFailOn = review.DefaultFailOn
	// DefaultOverrideLabel is the pull-request label that approves failing gates.
	DefaultOverrideLabel = review.DefaultOverrideLabel
)
