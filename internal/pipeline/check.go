package pipeline

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/failure"
)

// CheckOptions are the inputs of `cdkbot check`.
type CheckOptions struct {
	Assembly        string
	Config          string
	ConfigRequired  bool   // named by the user: a missing file is an error
	ConfigCheckout  string // the checkout Config is read in, as LoadConfig says ("" when named)
	NoStabilization bool
	// Write, when set, is a new directory to write the assembly with mutated templates to.
	Write string
	Log   io.Writer // hears that no policy is configured
}

// Check applies the configured policy aspects to an assembly, in priority order.
func Check(o CheckOptions) (*aspects.Report, error) {
	a, err := LoadAssembly(o.Assembly)
	if err != nil {
		return nil, err
	}
	cfg, _, found, err := LoadConfig(o.Config, o.ConfigCheckout, o.ConfigRequired)
	if err != nil {
		return nil, err
	}
	if !found {
		cfg = &aspects.Config{}
		if o.Log != nil {
			fmt.Fprintf(o.Log, "no %s: no policy configured, nothing to check (see README \"cdkbot check\")\n", o.Config)
		}
	}
	if o.NoStabilization {
		off := false
		cfg.Stabilization = &off
	}
	app, err := aspects.Build(a)
	if err != nil {
		return nil, failure.InputErr(err)
	}
	rep, err := aspects.Run(app, cfg, nil)
	if err != nil {
		return nil, failure.InputErr(err)
	}
	if o.Write != "" {
		if err := writeMutated(o.Assembly, o.Write, app); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// writeMutated copies the assembly to dir (which must not exist) and rewrites the templates
// mutating aspects changed. It writes into a temporary sibling first and renames it, so a
// failure leaves nothing half-written.
func writeMutated(src, dir string, app *aspects.App) error {
	if _, err := os.Stat(dir); err == nil {
		return failure.Usagef("--write %s: the directory exists; name a new one", dir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), ".cdkbot-write-")
	if err != nil {
		return failure.OperationErr(err)
	}
	defer os.RemoveAll(tmp)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		return failure.OperationErr(fmt.Errorf("copy %s: %w", src, err))
	}
	for id, tpl := range app.ChangedTemplates() {
		s := app.ArtifactByID(id)
		out := []byte(cfn.JSON(tpl) + "\n")
		if err := os.WriteFile(filepath.Join(tmp, filepath.FromSlash(s.TemplatePath)), out, 0o644); err != nil {
			return failure.OperationErr(err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return failure.OperationErr(err)
	}
	return nil
}
