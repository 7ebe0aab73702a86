package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads the GC percent in effect (setting it back as it was).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestFirstCollectionIsDeferredThenDefaultPacingReturns(t *testing.T) {
	t.Cleanup(func() { debug.SetGCPercent(100); debug.SetMemoryLimit(math.MaxInt64) })
	deferFirstCollection(func(string) string { return "" })
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	garbage := make([][]byte, 0, 64)
	for range 64 { // 4 MiB: Go's default would collect here
		garbage = append(garbage, make([]byte, 64<<10))
	}
	var small runtime.MemStats
	runtime.ReadMemStats(&small)
	if small.NumGC != before.NumGC || gcPercent() != -1 {
		t.Fatalf("collected %d times under %d MiB; GC percent %d", small.NumGC-before.NumGC, firstCollectionAt>>20, gcPercent())
	}
	garbage = nil
	for range 3 * firstCollectionAt / (1 << 20) { // past the limit: a collection, then the default pacing
		garbage = append(garbage, make([]byte, 1<<20))
		if len(garbage) > 8 {
			garbage = garbage[1:]
		}
	}
	for deadline := time.Now().Add(5 * time.Second); gcPercent() != 100; {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent still %d after the first collection", gcPercent())
		}
		runtime.Gosched()
	}
	if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
		t.Fatalf("memory limit left at %d", limit)
	}
}

func TestTheEnvironmentsGCSettingsWin(t *testing.T) {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		deferFirstCollection(func(k string) string {
			if k == name {
				return "200"
			}
			return ""
		})
		if p := gcPercent(); p == -1 {
			t.Errorf("%s set: collection deferred anyway", name)
		}
	}
}
