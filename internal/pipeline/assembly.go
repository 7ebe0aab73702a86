package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/checkout"
	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/gitrepo"
)

// LoadAssembly loads the cloud assembly in dir from disk, never through a link out of dir:
// the assembly may be what a pull request's app wrote (its manifest.json a link to one of
// root's files).
func LoadAssembly(dir string) (*assembly.Assembly, error) {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, failure.Usagef("%s: no such directory; name the cloud assembly directory (usually cdk.out)", dir)
	}
	if err != nil {
		return nil, failure.Usagef("%s: %v", dir, err)
	}
	if !info.IsDir() {
		return nil, failure.Usagef(
			"%s is a file; name the cloud assembly directory (usually cdk.out) that holds manifest.json", dir)
	}
	return assembly.Load(checkout.FS(dir), dir)
}

// StackFilter keeps stacks whose qualified id, display name or stack name matches a glob; nil
// (keep all) without globs.
func StackFilter(globs []string) func(*assembly.Stack) bool {
	if len(globs) == 0 {
		return nil
	}
	return func(s *assembly.Stack) bool {
		for _, g := range globs {
			if s.Matches(g) {
				return true
			}
		}
		return false
	}
}

// CheckStacksMatch refuses a --stacks glob that matches no stack of any of the assemblies, as the
// CDK CLI does: a typo would otherwise select nothing and read as "no changes".
func CheckStacksMatch(globs []string, assemblies ...*assembly.Assembly) error {
	var names []string
	for _, g := range globs {
		found := false
		for _, a := range assemblies {
			if a == nil {
				continue
			}
			for _, s := range a.AllStacks() {
				if s.Matches(g) {
					found = true
				}
				if len(names) < 10 && !slices.Contains(names, s.DisplayName) {
					names = append(names, s.DisplayName)
				}
			}
		}
		if !found {
			return failure.Usagef("--stacks %q matches no stack (stacks: %s)", g, strings.Join(names, ", "))
		}
	}
	return nil
}

// ReadRepoFacts reads what a repository pins: the aws-cdk CLI from package-lock.json (exact),
// else from package.json (the lowest version its range allows), and cdk.json's context. They
// are files of a checkout (in the action, the pull request's): read as package checkout reads,
// never through a link out of the repository, regular files only, bounded. It reads the working
// tree, for assemblies given without git; a review of git revisions reads ReadRevisionFacts.
func ReadRepoFacts(dir string) (compat.RepoFacts, error) {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return compat.RepoFacts{}, failure.Usagef("--repo %s: not a directory", dir)
	}
	top := checkout.Top(dir)
	return parseRepoFacts(func(name string, limit int64) ([]byte, error) {
		raw, err := checkout.ReadFile(top, checkout.Rel(top, filepath.Join(dir, name)), limit)
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist):
			return raw, err
		case errors.As(err, new(*checkout.RefusedError)):
			return nil, failure.InputErr(err)
		}
		return nil, failure.Usagef("%s: %v", filepath.Join(dir, name), err)
	}, func(name string) string { return filepath.Join(dir, name) })
}

// ReadRevisionFacts reads what ReadRepoFacts reads, from revision rev (the one under review) of
// the repository holding dir, at dir's place in it, never from the working tree: reviewed from
// a checkout of main, a branch that bumps aws-cdk is checked against the branch's pin. A blob
// is read as gitrepo.ReadFile reads it: no symbolic links, regular files, its size bounded
// before it is read.
func ReadRevisionFacts(dir, rev string) (compat.RepoFacts, error) {
	read, where, err := revisionFiles(dir, rev)
	if err != nil {
		return compat.RepoFacts{}, err
	}
	return parseRepoFacts(read, where)
}

// revisionFiles reads files of the app directory dir at revision rev of its repository (never
// through a link, bounded; a missing file is fs.ErrNotExist), and names them for messages.
func revisionFiles(dir, rev string) (read func(name string, limit int64) ([]byte, error),
	where func(name string) string, err error) {
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return nil, nil, failure.Usagef("%v", err)
	}
	sha, err := repo.Resolve(rev)
	if err != nil {
		return nil, nil, failure.Usagef("%v", err)
	}
	appRel := appDir(repo, dir)
	at := func(name string) string { return path.Join(appRel, filepath.ToSlash(name)) }
	read = func(name string, limit int64) ([]byte, error) {
		raw, err := repo.ReadFile(sha, at(name), limit)
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist):
			return raw, err
		case errors.As(err, new(*gitrepo.RefusedError)):
			return nil, failure.InputErr(err)
		}
		return nil, failure.OperationErr(fmt.Errorf("read %s at %s: %w", at(name), rev, err))
	}
	return read, func(name string) string { return at(name) + " at " + rev }, nil
}

// parseRepoFacts reads the facts through read (a missing file: fs.ErrNotExist); where names a
// file for messages.
func parseRepoFacts(read func(name string, limit int64) ([]byte, error),
	where func(name string) string) (compat.RepoFacts, error) {
	var facts compat.RepoFacts
	decode := func(name string, v any) (bool, error) {
		limit := int64(checkout.MaxSettingsFile)
		if name == "package-lock.json" {
			limit = checkout.MaxLockFile
		}
		raw, err := read(name, limit)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return false, failure.InputErr(fmt.Errorf("%s: not valid JSON: %w", where(name), err))
		}
		return true, nil
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
		Dependencies map[string]struct {
			Version string `json:"version"`
		} `json:"dependencies"`
	}
	if ok, err := decode("package-lock.json", &lock); err != nil {
		return facts, err
	} else if ok {
		if p, found := lock.Packages["node_modules/aws-cdk"]; found {
			facts.CLIVersion, facts.CLISource = p.Version, "package-lock.json"
		} else if d, found := lock.Dependencies["aws-cdk"]; found {
			facts.CLIVersion, facts.CLISource = d.Version, "package-lock.json"
		}
		if p, found := lock.Packages["node_modules/aws-cdk-lib"]; found {
			facts.FrameworkVersion = p.Version
		}
	}
	var pkg struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if ok, err := decode("package.json", &pkg); err != nil {
		return facts, err
	} else if ok && facts.CLIVersion == "" {
		for _, deps := range []map[string]string{pkg.DevDependencies, pkg.Dependencies} {
			if r, found := deps["aws-cdk"]; found {
				facts.CLIVersion, facts.CLISource = lowestOfRange(r), "package.json"
			}
		}
	}
	var cdkJSON struct {
		Context map[string]any `json:"context"`
	}
	if _, err := decode("cdk.json", &cdkJSON); err != nil {
		return facts, err
	}
	facts.Context = cdkJSON.Context
	return facts, nil
}

// lowestOfRange is the smallest version an npm range such as "^2.1020.0" or ">=2.1000.0 <3"
// allows: the version its first comparator names.
func lowestOfRange(r string) string {
	first := strings.Fields(r)
	if len(first) == 0 {
		return ""
	}
	return strings.TrimLeft(first[0], "^~>=v")
}
