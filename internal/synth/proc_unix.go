//go:build unix

package synth

import (
	"context"
	"io/fs"
	"os/exec"
	"syscall"
)

// shellCommand runs command with the POSIX shell, as cdk.json's "app" is written for.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "sh", "-c", command)
}

// inOwnGroup starts cmd in a process group of its own (so all it starts can be stopped
// together), as user when one is given.
func inOwnGroup(cmd *exec.Cmd, user *Identity) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if user != nil {
		cmd.SysProcAttr.Credential = user.credential()
	}
	return nil
}

// interruptGroup asks the whole group to stop (SIGINT, as Ctrl-C would).
func interruptGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }

// killGroup kills what is left of the group.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// killUser kills every process of user, in or out of the group: the user is dedicated to
// synthesis, so whatever it still runs is the app's.
func killUser(user *Identity) {
	killAll := exec.Command("kill", "-9", "-1")
	killAll.SysProcAttr = &syscall.SysProcAttr{Credential: user.credential()}
	_ = killAll.Run()
}

func (i *Identity) credential() *syscall.Credential {
	return &syscall.Credential{Uid: i.UID, Gid: i.GID, NoSetGroups: true}
}

// ownerOf is the uid that owns a file.
func ownerOf(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
