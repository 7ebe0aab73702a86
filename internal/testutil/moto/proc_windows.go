//go:build windows

package moto

import "os/exec"

// Start skips on Windows before a server is started; these keep the package compiling there.
func ownGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
