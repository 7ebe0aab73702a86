package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/resourcespec"
)

// Diff compares two CloudFormation templates (.json or .yaml files) or two cloud assemblies
// (directories), keeping the stacks whose id, display name or stack name matches a glob.
func Diff(oldPath, newPath string, stacks []string) (*render.DiffReport, error) {
	for _, g := range stacks {
		if _, err := path.Match(g, ""); err != nil {
			return nil, failure.Usagef("--stacks %q is not a valid glob: %v", g, err)
		}
	}
	oldDir, err := isDir(oldPath)
	if err != nil {
		return nil, err
	}
	newDir, err := isDir(newPath)
	if err != nil {
		return nil, err
	}
	var report render.DiffReport
	switch {
	case oldDir && newDir:
		// The two assemblies are independent: read them side by side, while the resource
		// specification the diff needs is indexed.
		go resourcespec.Default()
		var oldA, newA *assembly.Assembly
		var oldErr, newErr error
		var wg sync.WaitGroup
		wg.Go(func() { oldA, oldErr = LoadAssembly(oldPath) })
		newA, newErr = LoadAssembly(newPath)
		wg.Wait()
		if err := cmp.Or(oldErr, newErr); err != nil { // the old side's problem first, as before
			return nil, err
		}
		// Each stack's templates are let go once it is diffed: memory follows the largest stack.
		report.Stacks, err = cfndiff.DiffAssemblies(oldA, newA, StackFilter(stacks),
			cfndiff.Options{ReleaseTemplates: true})
		if err != nil {
			return nil, failure.InputErr(err)
		}
	case !oldDir && !newDir:
		oldT, err := readTemplate(oldPath)
		if err != nil {
			return nil, err
		}
		newT, err := readTemplate(newPath)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(filepath.Base(newPath), filepath.Ext(newPath))
		report.Stacks = []*cfndiff.StackDiff{cfndiff.DiffTemplates(name, oldT, newT, cfndiff.Options{})}
	default:
		return nil, failure.Usagef("OLD and NEW must both be template files or both be cloud assembly directories "+
			"(got %s and %s)", oldPath, newPath)
	}
	return &report, nil
}

// isDir says whether p is a directory; a missing path is a usage error.
func isDir(p string) (bool, error) {
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, failure.Usagef("%s: no such file or directory", p)
	}
	if err != nil {
		return false, failure.Usagef("%s: %v", p, err)
	}
	return info.IsDir(), nil
}

func readTemplate(p string) (*cfn.Object, error) {
	// A FIFO or a device would hang the read or never end: only regular files, bounded.
	if info, err := os.Stat(p); err == nil && (!info.Mode().IsRegular() || info.Size() > assembly.MaxFileSize) {
		return nil, failure.Usagef("%s: not a regular file of at most %d bytes (%s, %d bytes)",
			p, int64(assembly.MaxFileSize), info.Mode().Type(), info.Size())
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, failure.Usagef("%s: %v", p, err)
	}
	t, err := cfn.Parse(raw)
	if err != nil {
		return nil, failure.InputErr(fmt.Errorf("%s: %w", p, err))
	}
	return t, nil
}
