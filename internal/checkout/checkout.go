// Package checkout reads the files of a checkout cdkbot did not write (a pull request's
// revision, a repository's working tree) the way the checkout's owner would see them. cdkbot
// often runs as root while the checkout is pull-request code: a committed symbolic link such as
// cdk.context.json -> /root/secret.json must not hand root's files to the app or to the log, and
// package-lock.json -> /dev/zero must not exhaust cdkbot's memory.
//
// So a file is opened through os.Root: no path, and no symbolic link, leads out of the
// checkout's top directory. A link to another file inside the checkout is followed if its
// target is relative (infra/cdk.json -> ../cdk.json); a link with an absolute target is refused
// even when it names a file inside, since the checkout may sit anywhere. Only regular files are
// read (not a named pipe, a device or a directory, which would hang, never end or mislead), and
// only up to a limit for their kind.
package checkout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The limits, by kind of file. A file over its limit is a mistake or an attack, not a project.
const (
	// MaxSettingsFile bounds hand-written settings: cdk.json, cdk.context.json, .cdkbot.yml,
	// package.json. They are kilobytes; a large cdk.context.json of many lookups is a few
	// hundred.
	MaxSettingsFile = 1 << 20
	// MaxLockFile bounds lock files (package-lock.json, yarn.lock, pnpm-lock.yaml, …): a large
	// monorepo's is tens of megabytes.
	MaxLockFile = 64 << 20
)

// RefusedError is a file of the checkout that cdkbot will not read, and why.
type RefusedError struct {
	Name string // as the caller named it, relative to the checkout's top
	Why  string // what the file is: "is a symbolic link that leads out of the checkout"
	Fix  string // what to do
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Name, e.Why, e.Fix)
}

// Top is the top of the checkout dir is in: the nearest directory at or above dir that holds
// .git, else dir itself (a checkout written without git metadata).
func Top(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}

// Rel is path (a file of the checkout, named as the caller names files) relative to the
// checkout's top root, for ReadFile. A path outside root gives a name starting with "..",
// which ReadFile refuses.
func Rel(root, path string) string {
	absRoot, err1 := filepath.Abs(root)
	absPath, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return path
	}
	rel, err := filepath.Rel(absRoot, absPath)
	if err != nil {
		return path
	}
	return rel
}

// ReadFile reads name, a path relative to the checkout's top directory root, as the package
// doc says: inside the checkout, a regular file, at most limit bytes. A missing file is an
// error that matches fs.ErrNotExist; a file cdkbot will not read is a *RefusedError.
func ReadFile(root, name string, limit int64) ([]byte, error) {
	f, size, err := open(root, name, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized from the stat, as os.ReadFile does: one allocation for the common case.
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(&bounded{r: f, name: name, limit: limit, left: limit}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Open opens name as ReadFile reads it, for a reader that streams it (a lock file being
// hashed) and fails once it has given limit bytes and there is more.
func Open(root, name string, limit int64) (io.ReadCloser, error) {
	f, _, err := open(root, name, limit)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{&bounded{r: f, name: name, limit: limit, left: limit}, f}, nil
}

// open opens name inside root and checks what it is; size is its size when opened.
func open(root, name string, limit int64) (*os.File, int64, error) {
	if !filepath.IsLocal(name) {
		return nil, 0, &RefusedError{Name: name, Why: "is not inside the checkout",
			Fix: "cdkbot reads the files of a repository it reviews only inside it; name a file of the repository"}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, 0, fmt.Errorf("open the checkout %s: %w", root, err)
	}
	defer r.Close()
	// Non-blocking: opening a named pipe for reading would otherwise wait for a writer. The
	// checks below are of the file opened, so nothing can be swapped in between.
	f, err := r.OpenFile(filepath.Clean(name), openFlags, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0, err
	case escapes(err):
		return nil, 0, &RefusedError{Name: name, Why: "is, or goes through, a symbolic link that leads out of the checkout",
			Fix: "cdkbot reads the files of a repository it reviews only inside it, and follows only links with a " +
				"relative target inside it; commit the file itself"}
	case err != nil:
		return nil, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	switch {
	case !info.Mode().IsRegular():
		f.Close()
		return nil, 0, &RefusedError{Name: name, Why: "is " + kind(info.Mode()) + ", not a regular file",
			Fix: "cdkbot reads only regular files; commit the file itself"}
	case info.Size() > limit:
		f.Close()
		return nil, 0, tooLarge(name, info.Size(), limit)
	}
	return f, info.Size(), nil
}

// escapes reports os.Root's refusal of a path that leads out of it. Package os does not export
// that error, so it is known by its text; any other failure to open is refused all the same.
func escapes(err error) bool {
	return err != nil && strings.HasSuffix(err.Error(), "path escapes from parent")
}

func tooLarge(name string, size, limit int64) error {
	return overLimit(name, fmt.Sprintf("is %d bytes, over", size), limit)
}

func overLimit(name, what string, limit int64) error {
	return &RefusedError{Name: name, Why: fmt.Sprintf("%s cdkbot's limit of %d bytes for this file", what, limit),
		Fix: "a file this large is not one a CDK project commits; check what was committed under this name"}
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a " + m.Type().String() + " file"
}

// bounded reads at most left bytes of r and fails if r has more: a file that grows while it
// is read is refused like one that was too large to begin with.
type bounded struct {
	r           io.Reader
	name        string
	limit, left int64
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			return 0, overLimit(b.name, "grew, while it was read, past", b.limit)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}
