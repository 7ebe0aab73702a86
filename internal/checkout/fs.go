package checkout

import (
	"io/fs"
	"os"
)

// FS is the tree at dir as a file system that never leads out of it (package doc): for what
// cdkbot reads but did not write other than a checkout's files, such as the assembly a pull
// request's app wrote, whose manifest.json could be a link to one of root's files. dir is
// opened afresh for each call, so nothing stays open between reads: an assembly is read
// lazily, and its directory may be removed meanwhile.
func FS(dir string) fs.FS { return rootFS(dir) }

type rootFS string

var (
	_ fs.StatFS     = rootFS("")
	_ fs.ReadLinkFS = rootFS("")
)

// in runs op with dir opened as an os.Root, telling a path that leads out of it by name.
func (d rootFS) in(op, name string, do func(*os.Root) error) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	r, err := os.OpenRoot(string(d))
	if err != nil {
		return err
	}
	defer r.Close()
	if err := do(r); escapes(err) {
		return &RefusedError{Name: name, Why: "is, or goes through, a symbolic link that leads out of " + string(d),
			Fix: "cdkbot follows only links with a relative target inside it"}
	} else if err != nil {
		return err
	}
	return nil
}

func (d rootFS) Open(name string) (fs.File, error) {
	var f *os.File
	if err := d.in("open", name, func(r *os.Root) (err error) { f, err = r.Open(name); return err }); err != nil {
		return nil, err
	}
	return f, nil
}

func (d rootFS) Stat(name string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := d.in("stat", name, func(r *os.Root) (err error) { fi, err = r.Stat(name); return err })
	return fi, err
}

func (d rootFS) Lstat(name string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := d.in("lstat", name, func(r *os.Root) (err error) { fi, err = r.Lstat(name); return err })
	return fi, err
}

func (d rootFS) ReadLink(name string) (string, error) {
	var target string
	err := d.in("readlink", name, func(r *os.Root) (err error) { target, err = r.Readlink(name); return err })
	return target, err
}
