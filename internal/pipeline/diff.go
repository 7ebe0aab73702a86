package pipeline

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
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
	dirs, err := diffInputs(oldPath, newPath, stacks)
	if err != nil {
		return nil, err
	}
	var report render.DiffReport
	switch dirs {
	case bothDirs:
		oldA, newA, err := loadBoth(oldPath, newPath)
		if err != nil {
			return nil, err
		}
		if err := CheckStacksMatch(stacks, oldA, newA); err != nil {
			return nil, err
		}
		// Each stack's templates are let go once it is diffed: memory follows the largest stack.
		report.Stacks, err = cfndiff.DiffAssemblies(oldA, newA, StackFilter(stacks),
			cfndiff.Options{ReleaseTemplates: true})
		if err != nil {
			return nil, failure.InputErr(err)
		}
	case bothFiles:
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
	}
	return &report, nil
}

// DiffView is how DiffTo writes a diff: its format (text, markdown or json) and view options.
type DiffView struct {
	Format  string
	Options render.DiffOptions
}

// DiffTo diffs as Diff does and writes the view to w; it says whether a stack changes (what
// --fail acts on). Two assemblies are diffed and written stack by stack, each stack let go once
// written, so memory follows the largest stack, not the assembly: the view goes to a spool file
// first (the text view's headline counts every stack, the Markdown view's size budget weighs
// them, and an error in a later stack leaves w untouched, as Diff does), then to w. Template
// files and a machine without a temporary directory diff whole.
func DiffTo(w io.Writer, oldPath, newPath string, stacks []string, view DiffView) (bool, error) {
	dirs, err := diffInputs(oldPath, newPath, stacks)
	if err != nil {
		return false, err
	}
	if dirs == bothDirs {
		if spool, err := os.CreateTemp("", "cdkbot-diff-*"); err == nil {
			defer os.Remove(spool.Name())
			defer spool.Close()
			return diffStacksTo(w, spool, oldPath, newPath, stacks, view)
		}
	}
	report, err := Diff(oldPath, newPath, stacks)
	if err != nil {
		return false, err
	}
	switch view.Format {
	case "json":
		err = render.DiffJSON(w, *report)
	case "markdown":
		err = render.DiffMarkdown(w, *report, view.Options)
	default:
		err = render.DiffText(w, *report, view.Options)
	}
	return report.HasChanges(), err
}

// diffStacksTo writes the diff of two assemblies to spool stack by stack, then to w. The Markdown
// view keeps each stack's text at every detail level in the spool and copies to w the ones that fit.
func diffStacksTo(w io.Writer, spool *os.File, oldPath, newPath string, stacks []string, view DiffView) (bool, error) {
	oldA, newA, err := loadBoth(oldPath, newPath)
	if err != nil {
		return false, err
	}
	if err := CheckStacksMatch(stacks, oldA, newA); err != nil {
		return false, err
	}
	buf := bufio.NewWriterSize(spool, 1<<16)
	var counts render.Counts
	js := render.NewDiffJSONStream(buf)
	md := render.NewDiffMarkdownStream(spool, view.Options) // whole stacks at a time: unbuffered
	var writeErr error
	err = cfndiff.DiffAssembliesEach(oldA, newA, StackFilter(stacks), cfndiff.Options{},
		func(sd *cfndiff.StackDiff) error {
			counts.Add(sd)
			switch view.Format {
			case "json":
				writeErr = js.Stack(sd)
			case "markdown":
				writeErr = md.Stack(sd)
			default:
				writeErr = render.DiffTextStack(buf, sd, view.Options)
			}
			return writeErr
		})
	switch {
	case writeErr != nil:
		return false, fmt.Errorf("write the diff to %s: %w", spool.Name(), writeErr)
	case err != nil:
		return false, failure.InputErr(err)
	}
	switch view.Format {
	case "json":
		err = js.Close()
	case "markdown":
		return counts.StacksChanged > 0, md.Close(w)
	}
	if err = cmp.Or(err, buf.Flush()); err != nil {
		return false, fmt.Errorf("write the diff to %s: %w", spool.Name(), err)
	}
	if view.Format != "json" {
		if err := render.DiffTextHeadline(w, counts, view.Options); err != nil {
			return false, err
		}
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return false, fmt.Errorf("read the diff back from %s: %w", spool.Name(), err)
	}
	if _, err := io.Copy(w, spool); err != nil {
		return false, err
	}
	return counts.StacksChanged > 0, nil
}

// Kinds of inputs of a diff.
const (
	bothFiles = iota
	bothDirs
)

// diffInputs checks the globs and says whether OLD and NEW are both templates or both assemblies.
func diffInputs(oldPath, newPath string, stacks []string) (int, error) {
	for _, g := range stacks {
		if _, err := path.Match(g, ""); err != nil {
			return 0, failure.Usagef("--stacks %q is not a valid glob: %v", g, err)
		}
	}
	oldDir, err := isDir(oldPath)
	if err != nil {
		return 0, err
	}
	newDir, err := isDir(newPath)
	if err != nil {
		return 0, err
	}
	switch {
	case oldDir && newDir:
		return bothDirs, nil
	case !oldDir && !newDir:
		return bothFiles, nil
	}
	return 0, failure.Usagef("OLD and NEW must both be template files or both be cloud assembly directories "+
		"(got %s and %s)", oldPath, newPath)
}

// loadBoth loads two assemblies. They are independent: read side by side, while the resource
// specification the diff needs is indexed.
func loadBoth(oldPath, newPath string) (*assembly.Assembly, *assembly.Assembly, error) {
	go resourcespec.Default()
	var oldA, newA *assembly.Assembly
	var oldErr, newErr error
	var wg sync.WaitGroup
	wg.Go(func() { oldA, oldErr = LoadAssembly(oldPath) })
	newA, newErr = LoadAssembly(newPath)
	wg.Wait()
	if err := cmp.Or(oldErr, newErr); err != nil { // the old side's problem first, as before
		return nil, nil, err
	}
	return oldA, newA, nil
}

// isDir says whether p is a directory; a missing path is a usage error.
func isDir(p string) (bool, error) {
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, failure.Usagef("%s: no such file or directory; name two templates (.json, .yaml) or two "+
			"cloud assembly directories (usually cdk.out)", p)
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
