//go:build windows

package synth

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"strconv"
	"syscall"
)

// shellCommand runs command with cmd.exe, as the CDK CLI runs cdk.json's "app" on Windows.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "cmd.exe")
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: `cmd.exe /d /s /c "` + command + `"`}
	return cmd
}

// inOwnGroup starts cmd in a process group of its own. Synthesis users need POSIX
// credentials: on Windows, run synthesis in a job of its own instead (the setup action).
func inOwnGroup(cmd *exec.Cmd, user *Identity) error {
	if user != nil {
		return errors.New("synthesis as another user (--synth-user) needs Linux or macOS; on Windows leave it out")
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP
	return nil
}

// interruptGroup stops the process tree (Windows has no SIGINT to send to another console's group).
func interruptGroup(cmd *exec.Cmd) error {
	killGroup(cmd)
	return nil
}

// killGroup kills the process and everything it started.
func killGroup(cmd *exec.Cmd) {
	_ = exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid)).Run()
}

func killUser(*Identity) {}

func (i *Identity) chownAll(uint32, uint32, ...string) error {
	return errors.New("synthesis as another user (--synth-user) needs Linux or macOS")
}

func ownerOf(fs.FileInfo) (uint32, bool) { return 0, false }
