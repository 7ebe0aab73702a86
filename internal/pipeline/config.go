package pipeline

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/checkout"
	"github.com/cdkbot/cdkbot/internal/config"
	"github.com/cdkbot/cdkbot/internal/failure"
)

// LoadConfig reads the configuration file (.cdkbot.yml) once for every pipeline: the policy
// (its aspects, validated) and the deploy settings. A missing file is no configuration (found
// is false, policy nil) unless it is required, because the user named it.
//
// in is a directory of the checkout the file belongs to (the action's working directory; the
// current directory for the default .cdkbot.yml): the file is then read as a file of that
// checkout (package checkout), never through a link out of it, and bounded. Pull-request code
// may have committed it, and cdkbot, often root, would otherwise echo another file's keys in
// its errors. A path outside the checkout was named so by the workflow: it is read, still
// through no link out of its directory. With in "" the file is read wherever path leads: the
// user named it on the command line.
func LoadConfig(path, in string, required bool) (policy *aspects.Config, deploy config.Deploy, found bool, err error) {
	var raw []byte
	if in == "" {
		raw, err = os.ReadFile(path)
	} else {
		top := checkout.Top(in)
		name := checkout.Rel(top, path)
		if !filepath.IsLocal(name) {
			top, name = filepath.Dir(path), filepath.Base(path)
		}
		raw, err = checkout.ReadFile(top, name, checkout.MaxSettingsFile)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist) && !required:
		return nil, config.Deploy{}, false, nil
	case errors.As(err, new(*checkout.RefusedError)):
		return nil, config.Deploy{}, false, failure.InputErr(err)
	case err != nil:
		return nil, config.Deploy{}, false, failure.Usagef("--config %s: %v", path, err)
	}
	policy, deploy, err = aspects.Load(path, raw)
	if err != nil {
		return nil, config.Deploy{}, true, failure.InputErr(err)
	}
	return policy, deploy, true, nil
}

// loadRevisionConfig reads the policy configuration name (a path relative to the app's
// directory, dir) from revision rev of dir's repository: never through a link, bounded. A
// revision without one has no policy.
func loadRevisionConfig(dir, rev, name string) (*aspects.Config, error) {
	read, where, err := revisionFiles(dir, rev)
	if err != nil {
		return nil, err
	}
	raw, err := read(name, checkout.MaxSettingsFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	policy, _, err := aspects.Load(where(name), raw)
	if err != nil {
		return nil, failure.InputErr(err)
	}
	return policy, nil
}
