// Package fakesudo installs a stand-in for sudo (./cmd) for tests of cdkbot's sudo path where
// sudo is not installed: built from source, owned by root and setuid, it lets a test run cdkbot
// as an unprivileged user that has "passwordless sudo", as on a GitHub-hosted runner.
package fakesudo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Install builds the stand-in as dir/sudo and returns dir; it skips the test unless it runs as
// root with a Go toolchain. dir, and the directories above it, must let the unprivileged user
// through.
func Install(t *testing.T, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the stand-in for sudo is setuid root")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		t.Skip("no Go toolchain to build the stand-in for sudo")
	}
	_, self, _, _ := runtime.Caller(0)
	build := exec.Command(goTool, "build", "-o", filepath.Join(dir, "sudo"), ".")
	build.Dir = filepath.Join(filepath.Dir(self), "cmd")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the stand-in for sudo: %v\n%s", err, out)
	}
	if err := os.Chmod(filepath.Join(dir, "sudo"), os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
