package synth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"time"
)

// Host is the machine as choosing a sandbox sees it: who cdkbot runs as, whether it may run
// commands as other users through sudo, and the synthesis users. The choice itself (which
// users, refused or not) is the review pipeline's; tests give it a Host of their own.
type Host interface {
	// UID is the user cdkbot runs as: 0 is root, which switches users itself (-1 on Windows).
	UID() int
	// Sudo reports whether passwordless sudo works here (`sudo -n true` succeeds, as on
	// GitHub-hosted runners).
	Sudo(ctx context.Context) bool
	// LookupUser finds a user by name; ErrNoUser when there is none.
	LookupUser(name string) (*Identity, error)
	// CreateUser adds an unprivileged system user with a group of its own, no home and no login
	// shell, as the action's image does; through sudo when sudo is set.
	CreateUser(ctx context.Context, name string, sudo bool) error
}

// ErrNoUser is a user name the machine does not know.
var ErrNoUser = errors.New("no such user")

// System is the machine cdkbot runs on.
type System struct{}

var _ Host = System{}

// UID is cdkbot's effective uid.
func (System) UID() int { return os.Geteuid() }

// Sudo runs `sudo -n true`: -n fails at once instead of asking for a password.
func (System) Sudo(ctx context.Context) bool {
	sudo, err := exec.LookPath("sudo")
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sudo, "-n", "true")
	cmd.Dir = string(os.PathSeparator)
	return cmd.Run() == nil
}

// LookupUser reads the user database.
func (System) LookupUser(name string) (*Identity, error) {
	u, err := user.Lookup(name)
	if errors.As(err, new(user.UnknownUserError)) || name == "" {
		return nil, ErrNoUser
	}
	if err != nil {
		return nil, err
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %s: its ids are not numeric (%s:%s)", name, u.Uid, u.Gid)
	}
	return &Identity{UID: uint32(uid), GID: uint32(gid)}, nil
}

// CreateUser runs useradd (Linux; macOS and Windows have none).
func (System) CreateUser(ctx context.Context, name string, sudo bool) error {
	useradd := firstExisting("/usr/sbin/useradd", "/sbin/useradd", "/usr/bin/useradd")
	if useradd == "" {
		return fmt.Errorf("create user %s: there is no useradd here; create it yourself "+
			"(dedicated to synthesis, no login shell)", name)
	}
	shell := firstExisting("/usr/sbin/nologin", "/sbin/nologin")
	if shell == "" {
		shell = "/bin/false"
	}
	args := []string{useradd, "--system", "--user-group", "--no-create-home", "--shell", shell, name}
	if sudo {
		path, err := exec.LookPath("sudo")
		if err != nil {
			return fmt.Errorf("create user %s: %w", name, err)
		}
		args = append([]string{path, "-n", "--"}, args...)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = string(os.PathSeparator)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("create user %s (%s): %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func firstExisting(paths ...string) string {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}

// OwnerOf is the uid that owns a file (false where files have no uid: Windows).
func OwnerOf(fi fs.FileInfo) (uint32, bool) { return ownerOf(fi) }
