//go:build unix

package synth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// shellCommand runs command with the POSIX shell, as cdk.json's "app" is written for.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "sh", "-c", command)
}

// inOwnGroup starts cmd in a process group of its own (so all it starts can be stopped
// together), as user when one is given: switched to by cdkbot itself as root, or through sudo.
func inOwnGroup(cmd *exec.Cmd, user *Identity) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	switch {
	case user != nil && user.Sudo:
		return throughSudo(cmd, user)
	case user != nil:
		cmd.SysProcAttr.Credential = user.credential()
	}
	return nil
}

// throughSudo rewrites cmd to run as user through passwordless sudo. sudo's own handling of the
// environment (env_reset, secure_path, env_check) differs from one sudoers file to the next, so
// the command starts from nothing (env -i) with exactly cmd.Env, which is the scrubbed
// allow-list: nothing in it is a secret the app does not get anyway. The checkout is user's
// (mode 0700): cdkbot cannot enter it, so the command does, as user. A session of its own gives
// it its process group and keeps it off any terminal cdkbot has (sudo would open a pty there).
func throughSudo(cmd *exec.Cmd, user *Identity) error {
	sudo, err := exec.LookPath("sudo")
	if err != nil {
		return fmt.Errorf("run as uid %d through sudo: %w", user.UID, err)
	}
	env, err := exec.LookPath("env")
	if err != nil {
		return fmt.Errorf("run as uid %d through sudo: %w", user.UID, err)
	}
	args := append([]string{"sudo", "-n", "-u", "#" + strconv.FormatUint(uint64(user.UID), 10), "--", env, "-i"},
		cmd.Env...)
	args = append(args, cmd.Path, "-c", `cd -- "$1" || exit 126; shift; exec "$@"`, "cdkbot", cmd.Dir, cmd.Path)
	cmd.Path, cmd.Args = sudo, append(args, cmd.Args[1:]...)
	cmd.Dir, cmd.Env = "/", []string{"PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return nil
}

// interruptGroup asks the whole group to stop (SIGINT, as Ctrl-C would). Through sudo only sudo
// itself is cdkbot's to signal; it passes the signal on.
func interruptGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }

// killGroup kills what is left of the group.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// killUser kills every process of user, in or out of the group: the user is dedicated to
// synthesis, so whatever it still runs is the app's.
func killUser(user *Identity) {
	if user.Sudo {
		if sudo, err := exec.LookPath("sudo"); err == nil {
			killAll := exec.Command(sudo, "-n", "-u", "#"+strconv.FormatUint(uint64(user.UID), 10), "--", "kill", "-9", "-1")
			killAll.Dir = "/"
			_ = killAll.Run()
		}
		return
	}
	killAll := exec.Command("kill", "-9", "-1")
	killAll.SysProcAttr = &syscall.SysProcAttr{Credential: user.credential()}
	_ = killAll.Run()
}

func (i *Identity) credential() *syscall.Credential {
	return &syscall.Credential{Uid: i.UID, Gid: i.GID, NoSetGroups: true}
}

// chownAll gives trees to uid:gid without following symbolic links: itself as root, through
// `sudo chown` for a user reached through sudo. Trees given back to cdkbot that way are made
// its own to read and remove too (u+rwX), whatever modes the app left: cdkbot is not root.
func (i *Identity) chownAll(uid, gid uint32, roots ...string) error {
	if !i.Sudo {
		for _, r := range roots {
			if err := chownTree(r, uid, gid); err != nil {
				return err
			}
		}
		return nil
	}
	sudo, err := exec.LookPath("sudo")
	if err != nil {
		return err
	}
	chown := exec.Command(sudo, append([]string{"-n", "chown", "-R", "-h", fmt.Sprintf("%d:%d", uid, gid), "--"},
		roots...)...)
	chown.Dir = "/"
	if out, err := chown.CombinedOutput(); err != nil {
		return fmt.Errorf("sudo chown %d:%d %s: %w: %s", uid, gid, strings.Join(roots, " "), err,
			strings.TrimSpace(string(out)))
	}
	if int(uid) != os.Geteuid() {
		return nil
	}
	for _, r := range roots {
		err := filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink != 0 {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			want := fi.Mode().Perm() | 0o600
			if d.IsDir() || fi.Mode().Perm()&0o111 != 0 {
				want |= 0o100
			}
			if want == fi.Mode().Perm() {
				return nil
			}
			return os.Chmod(p, want)
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// ownerOf is the uid that owns a file.
func ownerOf(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
