//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkProcess measures whole cdkbot processes as users start them: start-up (`version`)
// and diffs of two real template pairs of compat-fixtures (one with property changes, the largest),
// with their peak RSS. Built as releases are (CGO_ENABLED=0, -trimpath, -s -w).
func BenchmarkProcess(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "cdkbot")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	fixtures := filepath.Join("..", "..", "compat-fixtures")
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"version", []string{"version"}},
		{"diff-pipeline", []string{"diff", filepath.Join(fixtures, "aws-cdk-lib@2.0.0", "pipeline", "Pipeline.template.json"),
			filepath.Join(fixtures, "aws-cdk-lib@2.276.0", "pipeline", "Pipeline.template.json"), "--format", "json"}},
		{"diff-large-template", []string{"diff", filepath.Join(fixtures, "aws-cdk-core@1.204.0", "large-template", "Large.template.json"),
			filepath.Join(fixtures, "aws-cdk-lib@2.276.0", "large-template", "Large.template.json"), "--format", "json"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var peak int64
			for b.Loop() {
				cmd := exec.Command(bin, bc.args...)
				if err := cmd.Run(); err != nil {
					if _, ok := err.(*exec.ExitError); !ok {
						b.Fatal(err)
					}
				}
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && int64(ru.Maxrss) > peak {
					peak = int64(ru.Maxrss)
				}
			}
			b.ReportMetric(float64(peak)/1024, "peak-MiB")
		})
	}
}
