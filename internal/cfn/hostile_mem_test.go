//go:build linux

package cfn

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Each hostile input is parsed in a child process whose peak memory the harness measures: the
// bound holds for the process as a whole, not just for what a test can observe from inside.
// (The alias bomb used 1 GB in 29 s, the 11-byte self alias overflowed the stack.)
func TestHostileInputsInBoundedMemory(t *testing.T) {
	t.Parallel()
	if name := os.Getenv(hostileChildEnv); name != "" {
		_, err := Parse([]byte(hostileInputs()[name]))
		fmt.Printf("parsed: %v\n", err)
		return
	}
	if testing.Short() {
		t.Skip("spawns a process per input")
	}
	const maxRSS = 512 << 20 // generous for the race detector; the attacks took 1 GB to 24 GB
	for name := range hostileInputs() {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostileInputsInBoundedMemory$", "-test.count=1")
			cmd.Env = append(os.Environ(), hostileChildEnv+"="+name)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			elapsed := time.Since(start)
			if err != nil || !strings.Contains(string(out), "parsed:") {
				t.Fatalf("the child failed: %v\n%.2000s", err, out)
			}
			rss := int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10 // KiB on Linux
			t.Logf("%s: peak RSS %d MiB in %s: %s", name, rss>>20, elapsed.Round(time.Millisecond), strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]))
			if rss > maxRSS || elapsed > 30*time.Second {
				t.Errorf("%s: peak RSS %d MiB, %s (bounds: %d MiB, 30 s)", name, rss>>20, elapsed, maxRSS>>20)
			}
		})
	}
}
