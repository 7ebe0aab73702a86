//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO in place of a template, on the command line or inside an assembly, is refused at once
// with its name instead of hanging the read.
func TestFIFOIsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "t.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ok := writeFile(t, dir, "ok.json", `{"Resources":{}}`)
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, _, stderr := run(t, "diff", ok, fifo)
		if code != ExitUsage || !strings.Contains(stderr, "t.json: not a regular file") {
			t.Errorf("diff: exit %d %s", code, stderr)
		}
		asm := copyDir(t, fixture(t, "aws-cdk-lib@2.276.0/deploy-graph"))
		os.Remove(filepath.Join(asm, "Web.template.json"))
		syscall.Mkfifo(filepath.Join(asm, "Web.template.json"), 0o644)
		code, _, stderr = run(t, "diff", fixture(t, "aws-cdk-lib@2.276.0/deploy-graph"), asm)
		if code != ExitUsage && code != ExitFailure || !strings.Contains(stderr, "Web.template.json is not a regular file (a named pipe)") {
			t.Errorf("assembly: exit %d %s", code, stderr)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a FIFO hung cdkbot")
	}
}
