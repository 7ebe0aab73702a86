package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

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
	list, err := apps.Find(repo, head, cfg)
	if errors.Is(err, gitrepo.ErrTooManyFiles) {
		return nil, failure.InputErr(fmt.Errorf("%w: list the apps in .cdkbot.yml (apps.list)", err))
	}
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
	// The base's apps, as the base's configuration lists them: one the head lacks is reported
	// removed, since its stacks stay deployed with nothing left to deploy them.
	baseCfg, err := appsConfig(repo, base, cfgPath)
	if err != nil {
		return nil, err
	}
	baseList, err := apps.Find(repo, base, baseCfg)
	if err != nil {
		return nil, failure.InputErr(fmt.Errorf("the base's apps: %w", err))
	}
	plan := apps.NewPlan(key, list, baseKeys, headKeys, everything).WithRemoved(baseList, list)
	return &AppsPlan{Plan: plan, Base: base, Head: head}, nil
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

// gitrepo lists a revision's files for apps.Find.
var _ apps.Lister = (*gitrepo.Repo)(nil)
