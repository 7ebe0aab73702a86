//go:build unix

package moto

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the server in a process group of its own, so its workers die with it.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
