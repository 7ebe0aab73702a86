// Package publish executes a publish plan: files zipped (deterministically) or uploaded as they
// are to S3, images built and pushed to ECR, each destination through its publishing role.
package publish

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/flate"
)

// zipEpoch is the one timestamp every entry gets (the DOS epoch), so the archive depends only
// on names, modes and contents.
var zipEpoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// zipLevel is the deflate level: klauspost/compress at 5 compresses code and text about as
// well as the standard library's default and runs 2-3× faster, which matters most on large,
// incompressible assets. The same cdkbot version always writes the same bytes; S3 keys come
// from the synth-time source hash, so nothing depends on bytes staying equal across versions.
const zipLevel = 5

// Zip writes the directory dir as a deterministic zip to w and returns the archive's sha256:
// the same tree gives the same bytes whatever its mtimes, owners or order of creation.
//   - entries are the regular files and directories of dir, in byte order of their
//     slash-separated paths (so a directory precedes its contents);
//   - every timestamp is 1980-01-01 00:00:00; modes are 0755 for directories and executables,
//     0644 for other files;
//   - a symlink is followed when its target stays inside root (the assembly) and refused
//     otherwise, so an asset never carries files from outside what was synthesized.
//
// Contents are streamed; nothing is held in memory whole.
func Zip(w io.Writer, root, dir string) (string, error) {
	rootAbs, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	entries, err := collect(rootAbs, dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	zw := zip.NewWriter(io.MultiWriter(w, h))
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, zipLevel)
	})
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: zipEpoch}
		switch {
		case e.dir:
			hdr.Name += "/"
			hdr.Method = zip.Store
			hdr.SetMode(fs.ModeDir | 0o755)
		case e.exec:
			hdr.SetMode(0o755)
		default:
			hdr.SetMode(0o644)
		}
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return "", err
		}
		if e.dir {
			continue
		}
		f, err := os.Open(e.path)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(fw, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("zip %s: %w", e.name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

type entry struct {
	name string // slash path inside the archive
	path string // file to read
	dir  bool
	exec bool
}

// collect lists the archive's entries, following safe symlinks (with cycle protection).
func collect(root, dir string) ([]entry, error) {
	var out []entry
	var walk func(real, prefix string, depth int) error
	walk = func(real, prefix string, depth int) error {
		if depth > 64 {
			return fmt.Errorf("%s: directories nested too deeply (a symlink loop?)", prefix)
		}
		items, err := os.ReadDir(real)
		if err != nil {
			return err
		}
		for _, it := range items {
			p := filepath.Join(real, it.Name())
			name := it.Name()
			if prefix != "" {
				name = prefix + "/" + it.Name()
			}
			info, err := it.Info()
			if err != nil {
				return err
			}
			if info.Mode()&fs.ModeSymlink != 0 {
				target, err := filepath.EvalSymlinks(p)
				if err != nil {
					return fmt.Errorf("%s: broken symbolic link: %w", name, err)
				}
				if target != root && !strings.HasPrefix(target, root+string(filepath.Separator)) {
					return fmt.Errorf("%s: symbolic link to %s, outside the assembly: refusing to publish it", name, target)
				}
				if info, err = os.Stat(target); err != nil {
					return err
				}
				p = target
			}
			switch {
			case info.IsDir():
				out = append(out, entry{name: name, dir: true})
				if err := walk(p, name, depth+1); err != nil {
					return err
				}
			case info.Mode().IsRegular():
				out = append(out, entry{name: name, path: p, exec: info.Mode()&0o111 != 0})
			default:
				return fmt.Errorf("%s: not a regular file (%s)", name, info.Mode().Type())
			}
		}
		return nil
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	if err := walk(real, "", 0); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}
