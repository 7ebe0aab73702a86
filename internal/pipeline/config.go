package pipeline

import (
	"errors"
	"io/fs"
	"os"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/config"
	"github.com/cdkbot/cdkbot/internal/failure"
)

// LoadConfig reads the configuration file (.cdkbot.yml) once for every pipeline: the policy
// (its aspects, validated) and the deploy settings. A missing file is no configuration (found
// is false, policy nil) unless it is required, because the user named it.
func LoadConfig(path string, required bool) (policy *aspects.Config, deploy config.Deploy, found bool, err error) {
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !required:
		return nil, config.Deploy{}, false, nil
	case err != nil:
		return nil, config.Deploy{}, false, failure.Usagef("--config %s: %v", path, err)
	}
	policy, deploy, err = aspects.Load(path, raw)
	if err != nil {
		return nil, config.Deploy{}, true, failure.InputErr(err)
	}
	return policy, deploy, true, nil
}
