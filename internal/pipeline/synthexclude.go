package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/cdkbot/cdkbot/internal/config"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/synth"
)

// What a synthesis cannot read is no input of it: the files of the app's directory that
// synth.exclude of .cdkbot.yml (else synth.DefaultExcludes) leaves out are neither checked out
// for the synthesis nor part of its cache key. A commit that changes only them (documentation at
// the top of an app whose cdk.json is at the repository's root) reuses the assembly; an app
// that does read one fails to synthesize, with the hint to name it, instead of being reused
// stale. The patterns are part of the key, so a revision that changes them is synthesized anew.

// revisionExcludes reads what the app's synthesis leaves out at revision sha: synth.exclude of
// the revision's .cdkbot.yml in the app's directory, else at the repository's top, else the
// defaults. A .cdkbot.yml that cdkbot will not read (a link) or that does not parse leaves the
// defaults: the review's own reading of the file says what is wrong with it, and whichever
// patterns apply, what they leave out is neither read by the app nor keys its assembly.
func revisionExcludes(repo *gitrepo.Repo, sha, appRel string) (synth.Excludes, error) {
	patterns := synth.DefaultExcludes
	for _, name := range []string{path.Join(appRel, ".cdkbot.yml"), ".cdkbot.yml"} {
		raw, err := repo.ReadFile(sha, name, config.MaxBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			if f, perr := config.Parse(name, raw); perr == nil && f.Synth.Exclude != nil {
				patterns = f.Synth.Exclude
			}
		}
		break
	}
	e, err := synth.ParseExcludes(patterns)
	if err != nil {
		return synth.Excludes{}, failure.InputErr(fmt.Errorf(".cdkbot.yml: synth.exclude: %w", err))
	}
	return e, nil
}

// synthInputIDs returns the git id of each of inputs (synthInputs: the app's directory first)
// at sha, as the synthesis cache key takes them, but for the app's directory: its id is a
// digest of the exclude patterns and of the files the synthesis may read, each with its id.
func synthInputIDs(repo *gitrepo.Repo, sha string, inputs []string, appRel string) ([]string, error) {
	ids, err := repo.ObjectIDs(sha, inputs)
	if err != nil || len(ids) == 0 || ids[0] == "" {
		return ids, err
	}
	excl, err := revisionExcludes(repo, sha, appRel)
	if err != nil || excl.Empty() {
		return ids, err
	}
	entries, err := repo.Entries(sha, appRel, excl.Excluded)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "cdkbot synth inputs v1\x00exclude %q\x00", excl.Patterns())
	for _, e := range entries {
		fmt.Fprintf(h, "%o %s %s\x00", e.Mode, e.ID, e.Path)
	}
	ids[0] = "less-excluded:" + hex.EncodeToString(h.Sum(nil))
	return ids, nil
}

// materializeInputs checks the job's inputs out at its revision, less what the app's synthesis
// leaves out (but for the inputs named besides the app's directory, which stay whole).
func materializeInputs(repo *gitrepo.Repo, j *synthJob) error {
	if err := repo.MaterializePaths(j.sha, j.inputs, j.src); err != nil {
		return err
	}
	excl, err := revisionExcludes(repo, j.sha, j.appRel)
	if err != nil {
		return err
	}
	var named []string // the other inputs, relative to the app's directory
	for _, in := range j.inputs[1:] {
		if rel, ok := strings.CutPrefix(in, j.appRel+"/"); ok || j.appRel == "" {
			named = append(named, strings.TrimPrefix(rel, "/"))
		}
	}
	keep := func(rel string) bool {
		for _, n := range named {
			if n == rel || strings.HasPrefix(n, rel+"/") || strings.HasPrefix(rel, n+"/") {
				return true
			}
		}
		return false
	}
	return synth.RemoveExcluded(j.appDir, excl, keep)
}

// readsElsewhereHint is what a synthesis that failed is told about what it could read.
func readsElsewhereHint(appRel string, extra []string) string {
	return fmt.Sprintf("only %s are checked out for synthesis, less what .cdkbot.yml's synth.exclude leaves out "+
		"(by default %s): if the app reads other files of the repository, name them with --synth-inputs, "+
		"the action's synth-inputs; if it reads an excluded one, set synth.exclude without it",
		describeInputs(appRel, extra), strings.Join(synth.DefaultExcludes[:4], " ")+" …")
}
