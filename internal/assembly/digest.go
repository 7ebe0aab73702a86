package assembly

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// maxDigestDepth bounds directory nesting (and symbolic-link hops) in ContentDigest.
const maxDigestDepth = 64

// ContentDigest is the sha256 of what publishing the file or directory at rel (root-relative)
// uploads: a file's bytes, or a directory's entries in name order, each with its path, its
// executable bit and its bytes. Symbolic links are followed while they stay inside the
// assembly, as the publisher follows them; one that leaves it is an error, as it is there.
//
// The asset manifest names an asset by a hash the app wrote, and the publisher uploads whatever
// the files are: this digest is what lets a deploy tell that an asset is the one a review saw.
func (a *Assembly) ContentDigest(rel string) (string, error) {
	h := sha256.New()
	d := digester{fsys: a.fsys, w: h}
	if err := d.entry(path.Clean(rel), path.Clean(rel), 0); err != nil {
		return "", fmt.Errorf("digest %s: %w", rel, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

type digester struct {
	fsys fs.FS
	w    io.Writer
}

// entry writes the entry at name (its real path) under the name shown (its path as the
// publisher sees it, relative to the asset).
func (d digester) entry(name, shown string, depth int) error {
	if depth > maxDigestDepth {
		return fmt.Errorf("%s: nested too deeply (a symbolic-link loop?)", shown)
	}
	if name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) {
		return fmt.Errorf("%s leads out of the assembly", shown)
	}
	info, err := fs.Lstat(d.fsys, name)
	if err != nil {
		return err
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := fs.ReadLink(d.fsys, name)
		if err != nil {
			return err
		}
		if path.IsAbs(target) {
			return fmt.Errorf("%s links to %s, outside the assembly", shown, target)
		}
		return d.entry(path.Join(path.Dir(name), target), shown, depth+1)
	case info.IsDir():
		fmt.Fprintf(d.w, "dir %q\n", shown)
		entries, err := fs.ReadDir(d.fsys, name)
		if err != nil {
			return err
		}
		slices.SortFunc(entries, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
		for _, e := range entries {
			if err := d.entry(path.Join(name, e.Name()), path.Join(shown, e.Name()), depth+1); err != nil {
				return err
			}
		}
		return nil
	case info.Mode().IsRegular():
		fmt.Fprintf(d.w, "file %q %t %d\n", shown, info.Mode()&0o111 != 0, info.Size())
		f, err := d.fsys.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.Copy(d.w, f)
		if err == nil && n != info.Size() {
			err = errors.New("changed while it was read")
		}
		if err != nil {
			return fmt.Errorf("%s: %w", shown, err)
		}
		return nil
	}
	return fmt.Errorf("%s is not a file or directory (%s)", shown, fileKind(info.Mode()))
}
