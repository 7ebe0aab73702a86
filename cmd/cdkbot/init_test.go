package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// startupBudget bounds what package initialisation may allocate. Every cdkbot process pays it,
// `version` as much as `deploy`, in time and in memory touched before main runs (main defers
// the first collection, so nothing is given back early). aws-sdk-go-v2's schema-based serde
// releases of ssm and ecr alone allocate 1.8 MB here (see go.mod).
const startupBudget = 2 << 20

// ownStartupBudget bounds what cdkbot's own packages allocate at init: a regular expression
// with a counted repetition or a table built at package level costs every process; build it on
// first use (sync.OnceValue). They allocated 277 KB before that rule, 14 KB after.
const ownStartupBudget = 32 << 10

// TestStartupAllocations re-runs this test binary, which links every package cdkbot links, with
// the runtime's init trace and adds up what each package's initialisation allocated. Allocation
// counts are deterministic for a build, so this is a budget, not a timing.
func TestStartupAllocations(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("re-running the test binary: %v\n%s", err, stderr.String())
	}
	type pkgInit struct {
		name  string
		bytes int
	}
	var inits []pkgInit
	total, own := 0, 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init github.com/aws/aws-sdk-go-v2/service/s3/internal/endpoints @5.5 ms, 0.55 ms clock, 93616 bytes, 724 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("init trace line %q: %v", sc.Text(), err)
		}
		inits = append(inits, pkgInit{f[1], n})
		total += n
		if strings.HasPrefix(f[1], "github.com/cdkbot/cdkbot/") {
			own += n
		}
	}
	if len(inits) < 100 {
		t.Fatalf("read %d package inits from the trace; the runtime's format changed?\n%s", len(inits), stderr.String())
	}
	t.Logf("%d packages allocate %d bytes at init, cdkbot's own %d", len(inits), total, own)
	if own > ownStartupBudget {
		t.Errorf("cdkbot's own packages allocate %d bytes at init, over the %d-byte budget: build tables and "+
			"regular expressions on first use", own, ownStartupBudget)
	}
	if total > startupBudget {
		slices.SortFunc(inits, func(a, b pkgInit) int { return cmp.Compare(b.bytes, a.bytes) })
		var top strings.Builder
		for _, p := range inits[:min(8, len(inits))] {
			fmt.Fprintf(&top, "\n  %9d  %s", p.bytes, p.name)
		}
		t.Errorf("package initialisation allocates %d bytes, over the %d-byte start-up budget; the largest:%s\n"+
			"(a dependency bump that builds tables at init? see the note on ecr and ssm in go.mod)", total, startupBudget, top.String())
	}
}
