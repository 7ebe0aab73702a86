package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/cdkbot/cdkbot/internal/apps"
	"github.com/cdkbot/cdkbot/internal/checkout"
	"github.com/cdkbot/cdkbot/internal/config"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/gitrepo"
)

// AppsOptions are the inputs of the fan-out: which change, which configuration, and the
// synthesis settings that are part of every app's synthesis key.
type AppsOptions struct {
	Repo       string // a directory of the repository ("" is the current one)
	Base, Head string // git revisions; Head defaults to HEAD, Base to its merge base with the default branch
	// Config is the repository path of the configuration whose apps section lists the apps
	// (".cdkbot.yml" when ""), read at Head. A change to it touches every app: every leg's
	// review may read it.
	Config string
	// Key is the review's comment key; each leg's is Key/app/environment.
	Key string
	// The synthesis settings the legs will use: the same as the review's, so the keys agree.
	InstallCommand, SynthCommand string
	SynthInputs                  []string
	Log                          io.Writer
}

// AppsPlan is the fan-out of a change: its apps, each touched or not, and the commits compared.
type AppsPlan struct {
	apps.Plan
	Base string `json:"base"`
	Head string `json:"head"`
}

// Apps lists every app of the change's head in every environment, and marks those whose
// synthesis key (the git ids of what the synthesis reads, as the review's cache computes it)
// differs between base and head: only those are reviewed. Nothing is synthesized here.
func Apps(_ context.Context, o AppsOptions) (*AppsPlan, error) {
	dir := o.Repo
	if dir == "" {
		dir = "."
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return nil, failure.Usagef("%v", err)
	}
	if o.Head == "" {
		o.Head = "HEAD"
	}
	head, err := repo.Resolve(o.Head)
	if err != nil {
		return nil, failure.Usagef("--head: %v", err)
	}
	base := o.Base
	if base == "" {
		if base, err = repo.MergeBase(repo.DefaultBranch(), head); err != nil {
			return nil, failure.Usagef("no --base given and %v", err)
		}
	}
	if base, err = repo.Resolve(base); err != nil {
		return nil, failure.Usagef("--base: %v", err)
	}
	cfgPath := o.Config
	if cfgPath == "" {
		cfgPath = ".cdkbot.yml"
	}
	cfg, err := appsConfig(repo, head, cfgPath)
	if err != nil {
		return nil, err
	}
	lister, err := openLister(repo.Root())
	if err != nil {
		return nil, failure.OperationErr(err)
	}
	list, err := apps.Find(lister, head, cfg)
	if err != nil {
		return nil, failure.InputErr(err)
	}
	ro := ReviewOptions{InstallCommand: o.InstallCommand, SynthCommand: o.SynthCommand, SynthInputs: o.SynthInputs}
	keys := func(rev string) (apps.Keys, error) {
		out := apps.Keys{}
		for _, a := range list {
			// What the review's synthesis would key its cache by; an app without cdk.json has none.
			if ids, err := repo.ObjectIDs(rev, []string{joinRepo(a.Dir, "cdk.json")}); err != nil || ids[0] == "" {
				continue
			}
			job, err := prepareSynth(repo, rev, filepath.Join(realPath(repo.Root()), filepath.FromSlash(a.Dir)),
				"", "apps", ro)
			if err != nil {
				return nil, failure.OperationErr(err)
			}
			out[a.Dir] = job.key
		}
		return out, nil
	}
	baseKeys, err := keys(base)
	if err != nil {
		return nil, err
	}
	headKeys, err := keys(head)
	if err != nil {
		return nil, err
	}
	everything := ""
	ids, err := repo.ObjectIDs(base, []string{cfgPath})
	if err != nil {
		return nil, failure.OperationErr(err)
	}
	hids, err := repo.ObjectIDs(head, []string{cfgPath})
	if err != nil {
		return nil, failure.OperationErr(err)
	}
	if ids[0] != hids[0] {
		everything = cfgPath + " changed, and every app's review reads it"
	}
	key := o.Key
	if key == "" {
		key = "default"
	}
	return &AppsPlan{Plan: apps.NewPlan(key, list, baseKeys, headKeys, everything), Base: base, Head: head}, nil
}

func joinRepo(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// appsConfig reads the apps section of the configuration at rev; a revision without the file
// discovers every app.
func appsConfig(repo *gitrepo.Repo, rev, name string) (config.Apps, error) {
	raw, err := repo.ReadFile(rev, name, checkout.MaxSettingsFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return config.Apps{}, nil
	case err != nil:
		return config.Apps{}, failure.InputErr(err)
	}
	cfg, err := config.ParseApps(name, raw)
	if err != nil {
		return config.Apps{}, failure.InputErr(err)
	}
	return cfg, nil
}

// maxListed bounds the files listed at a revision: a repository of pull request code can be
// anything, and a listing past this is refused rather than cut (an app past the cut would go
// unreviewed).
const maxListed = 2_000_000

// treeLister lists a revision's files from its git tree, without reading any of them.
type treeLister struct{ repo *git.Repository }

var _ apps.Lister = treeLister{}

func openLister(root string) (treeLister, error) {
	r, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	return treeLister{r}, err
}

// Files lists the regular files of rev (no links, no submodules).
func (l treeLister) Files(rev string) ([]string, error) {
	c, err := l.repo.CommitObject(plumbing.NewHash(rev))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", rev, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	var out []string
	for {
		name, e, err := w.Next()
		switch {
		case errors.Is(err, io.EOF):
			return out, nil
		case err != nil:
			return nil, fmt.Errorf("list the files of %s: %w", rev, err)
		case len(out) >= maxListed:
			return nil, fmt.Errorf("%s holds more than %d files: list the apps in .cdkbot.yml (apps.list)", rev, maxListed)
		}
		if e.Mode == filemode.Regular || e.Mode == filemode.Executable {
			out = append(out, name)
		}
	}
}
