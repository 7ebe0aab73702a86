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
// `version` as much as `deploy`, and the runtime starts its first collection at about 3.4 MB:
// staying well under keeps short commands free of any collection (each costs ~3 ms and ~0.5 MiB
// of a 7 ms, 15 MiB process). aws-sdk-go-v2's schema-based serde releases of ssm and ecr alone
// allocate 1.8 MB here (see go.mod).
const startupBudget = 2 << 20

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
	total := 0
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
	}
	if len(inits) < 100 {
		t.Fatalf("read %d package inits from the trace; the runtime's format changed?\n%s", len(inits), stderr.String())
	}
	t.Logf("%d packages allocate %d bytes at init", len(inits), total)
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
