package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/synth"
)

// History answers questions about a checkout's history, fetching what a shallow clone lacks.
type History struct {
	repo *gitrepo.Repo
	log  io.Writer
}

// OpenHistory opens the repository that holds dir; log hears when history is fetched.
func OpenHistory(dir string, log io.Writer) (*History, error) {
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return nil, failure.Usagef("%v", err)
	}
	if log == nil {
		log = io.Discard
	}
	return &History{repo: repo, log: log}, nil
}

// Parents resolves rev and returns it with its parents, first parent first.
func (h *History) Parents(rev string) (string, []string, error) { return h.repo.Parents(rev) }

// MergeBase is the best common ancestor of two commits, deepening a shallow clone once when
// it lacks them.
func (h *History) MergeBase(a, b string) (string, error) {
	mb, err := h.repo.MergeBase(a, b)
	if err != nil && h.repo.Shallow() {
		fmt.Fprintf(h.log, "cdkbot: the merge base of %s and %s is not in this shallow clone; fetching history\n",
			commitid.Short(a, commitid.GitHub), commitid.Short(b, commitid.GitHub))
		if derr := h.repo.Deepen(); derr != nil {
			return "", derr
		}
		return h.repo.MergeBase(a, b)
	}
	return mb, err
}

// SynthesizeOptions say how to synthesize a trusted checkout (the merged commit).
type SynthesizeOptions struct {
	Dir, OutDir                  string
	InstallCommand, SynthCommand string
	Log                          io.Writer
}

// Synthesize runs the app of a trusted checkout (it passed review and merge) in place and loads
// the assembly it wrote. Its output reaches the log cleaned, as a review's does (sideLogs).
func Synthesize(ctx context.Context, o SynthesizeOptions) (*assembly.Assembly, error) {
	logs := newSideLogs(o.Log, false)
	err := synth.Run(ctx, synth.Options{Dir: o.Dir, OutDir: o.OutDir, InstallCommand: o.InstallCommand,
		SynthCommand: o.SynthCommand, Env: os.Environ(), Log: logs.side("synth")})
	logs.flush()
	if err != nil {
		return nil, failure.InputErr(err)
	}
	return LoadAssembly(o.OutDir)
}

// Root is the repository's top directory.
func (h *History) Root() string { return h.repo.Root() }

// DefaultBranch is the branch reviews compare with when no base is named.
func (h *History) DefaultBranch() string { return h.repo.DefaultBranch() }

// LocalMergeBase is MergeBase from what the clone holds, never fetching: the pre-push hook does
// not reach out to the remote.
func (h *History) LocalMergeBase(a, b string) (string, error) { return h.repo.MergeBase(a, b) }

// PushedRef is one ref git is about to push: the pre-push hook's input, one line each.
type PushedRef struct {
	LocalRef, LocalSHA, RemoteSHA string
	NewBranch                     bool // the remote has no such branch yet
}

// PushBase is the commit a pushed ref is reviewed against: the remote's commit, or for a new
// branch its merge base with the default branch, from what the clone holds (the hook does not
// fetch).
func (h *History) PushBase(r PushedRef) (string, error) {
	if r.NewBranch {
		return h.LocalMergeBase(h.DefaultBranch(), r.LocalSHA)
	}
	return r.RemoteSHA, nil
}

// DescribePush names what the hook reviews for a ref: "refs/heads/x (base..head)".
func DescribePush(r PushedRef, base string) string {
	return fmt.Sprintf("%s (%s..%s)", r.LocalRef,
		commitid.Short(base, commitid.Unambiguous), commitid.Short(r.LocalSHA, commitid.Unambiguous))
}
