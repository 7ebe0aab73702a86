package deploy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/deployplan"
)

// fakeRun deploys by sleeping the stack's duration; it records the start order and the most
// stacks in flight at once.
type fakeRun struct {
	mu       sync.Mutex
	took     map[string]time.Duration
	fail     map[string]bool
	started  []string
	inFlight atomic.Int32
	peak     atomic.Int32
}

func (f *fakeRun) deploy(ctx context.Context, s deployplan.Stack) (Outcome, error) {
	f.mu.Lock()
	f.started = append(f.started, s.ID)
	f.mu.Unlock()
	n := f.inFlight.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	defer f.inFlight.Add(-1)
	time.Sleep(f.took[s.ID])
	if f.fail[s.ID] {
		return Outcome{Stack: s.ID, Result: Failed}, errors.New(s.ID + " broke")
	}
	return Outcome{Stack: s.ID, Result: Deployed}, nil
}

func stacks(spec string) []deployplan.Stack {
	// "A B:A C:A D:B,C" — id, then the ids it depends on; a leading "0/" puts it in wave 0 of 2.
	var out []deployplan.Stack
	for _, f := range strings.Fields(spec) {
		s := deployplan.Stack{Wave: 1}
		if rest, ok := strings.CutPrefix(f, "0/"); ok {
			s.Wave, f = 0, rest
		}
		id, deps, _ := strings.Cut(f, ":")
		s.ID = id
		if deps != "" {
			s.DependsOn = strings.Split(deps, ",")
		}
		out = append(out, s)
	}
	return out
}

func results(outs []Outcome) string {
	var b []string
	for _, o := range outs {
		r := o.Stack + "=" + string(o.Result)
		if o.Reason != "" {
			r += "(" + o.Reason + ")"
		}
		b = append(b, r)
	}
	return strings.Join(b, " ")
}

func TestScheduleRunsIndependentStacksTogetherWithinTheLimit(t *testing.T) {
	for _, limit := range []int{1, 2, 8} {
		f := &fakeRun{took: map[string]time.Duration{"A": 20 * time.Millisecond, "B": 20 * time.Millisecond, "C": 20 * time.Millisecond,
			"D": 5 * time.Millisecond, "E": 20 * time.Millisecond}}
		var heard []string
		outs, errs := schedule(context.Background(), stacks("A B:A C:A D:B,C E"), limit, f.deploy, func(o Outcome) { heard = append(heard, o.Stack) })
		if got := results(outs); got != "A=deployed B=deployed C=deployed D=deployed E=deployed" || firstError(errs) != nil {
			t.Fatalf("limit %d: %s %v", limit, got, errs)
		}
		if int(f.peak.Load()) > limit {
			t.Errorf("limit %d: %d stacks at once", limit, f.peak.Load())
		}
		if limit >= 2 && f.peak.Load() < 2 {
			t.Errorf("limit %d: independent stacks never overlapped", limit)
		}
		pos := map[string]int{}
		for i, id := range f.started {
			pos[id] = i
		}
		if pos["B"] < pos["A"] || pos["C"] < pos["A"] || pos["D"] < pos["B"] || pos["D"] < pos["C"] {
			t.Errorf("limit %d: started %v before their dependencies", limit, f.started)
		}
		if len(heard) != 5 || heard[len(heard)-1] == "A" {
			t.Errorf("limit %d: finished heard %v", limit, heard)
		}
	}
}

func TestScheduleSkipsDependentsOfAFailureAndLaterWaves(t *testing.T) {
	f := &fakeRun{took: map[string]time.Duration{}, fail: map[string]bool{"B": true}}
	outs, errs := schedule(context.Background(), stacks("A B:A C:A D:B,C E F:D"), 4, f.deploy, nil)
	want := "A=deployed B=failed C=deployed D=skipped(depends on B, which did not deploy) E=deployed " +
		"F=skipped(depends on D, which did not deploy)"
	if got := results(outs); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if err := firstError(errs); err == nil || err.Error() != "B broke" {
		t.Errorf("error %v", err)
	}

	// The mutation wave goes first; when it fails nothing else deploys.
	f = &fakeRun{took: map[string]time.Duration{"Pipeline": 20 * time.Millisecond}}
	outs, _ = schedule(context.Background(), stacks("0/Pipeline X Y:X"), 4, f.deploy, nil)
	if results(outs) != "Pipeline=deployed X=deployed Y=deployed" || f.started[0] != "Pipeline" {
		t.Errorf("waves: %s, started %v", results(outs), f.started)
	}
	f = &fakeRun{took: map[string]time.Duration{}, fail: map[string]bool{"Pipeline": true}}
	outs, _ = schedule(context.Background(), stacks("0/Pipeline X Y:X"), 4, f.deploy, nil)
	if got := results(outs); got != "Pipeline=failed X=skipped(an earlier wave did not deploy (Pipeline, wave 1)) "+
		"Y=skipped(depends on X, which did not deploy)" {
		t.Errorf("failed wave: %s", got)
	}
}

func TestScheduleStopsStartingStacksWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeRun{took: map[string]time.Duration{"A": 30 * time.Millisecond}}
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	outs, _ := schedule(ctx, stacks("A B:A C:B"), 1, f.deploy, nil)
	if outs[0].Result != Deployed || outs[1].Result != Skipped || !strings.HasPrefix(outs[1].Reason, "cancelled") || outs[2].Result != Skipped {
		t.Errorf("%s", results(outs))
	}
}

// BenchmarkScheduleCriticalPath deploys a 14-stack graph (a network layer, shared services,
// then services with uneven durations) and reports wall time over the critical path: 1.0 is
// perfect, the goal is at most 1.3.
func BenchmarkScheduleCriticalPath(b *testing.B) {
	spec := "Network Dns Data:Network Queue:Network Auth:Network,Dns " +
		"Svc1:Data,Auth Svc2:Data Svc3:Queue Svc4:Queue,Auth Svc5:Auth Svc6:Data,Queue Api:Svc1,Svc2,Svc3 Web:Api,Svc5 Ops:Svc4,Svc6"
	took := map[string]time.Duration{}
	for i, s := range stacks(spec) {
		took[s.ID] = time.Duration(5+(i*7)%13) * time.Millisecond
	}
	critical := criticalPath(stacks(spec), took)
	var total time.Duration
	for b.Loop() {
		f := &fakeRun{took: took}
		start := time.Now()
		outs, _ := schedule(context.Background(), stacks(spec), 4, f.deploy, nil)
		total += time.Since(start)
		if outs[len(outs)-1].Result != Deployed {
			b.Fatal(results(outs))
		}
	}
	b.ReportMetric(float64(total)/float64(b.N)/float64(critical), "wall/critical")
	b.ReportMetric(float64(critical.Milliseconds()), "critical-ms")
}

// criticalPath is the slowest chain of dependencies, summing stack durations.
func criticalPath(ss []deployplan.Stack, took map[string]time.Duration) time.Duration {
	finish := map[string]time.Duration{}
	var at func(id string) time.Duration
	byID := map[string]deployplan.Stack{}
	for _, s := range ss {
		byID[s.ID] = s
	}
	at = func(id string) time.Duration {
		if f, ok := finish[id]; ok {
			return f
		}
		var start time.Duration
		for _, d := range byID[id].DependsOn {
			start = max(start, at(d))
		}
		finish[id] = start + took[id]
		return finish[id]
	}
	var worst time.Duration
	for _, s := range ss {
		worst = max(worst, at(s.ID))
	}
	return worst
}

// The polling schedule: a fast first look, slowing by half while nothing happens up to the
// maximum, every 2×Poll while events keep coming.
func TestPollerSchedule(t *testing.T) {
	p := (&Deployer{}).poller()
	var got []string
	for _, progressed := range []bool{false, false, false, false, false, false, true, true, false} {
		got = append(got, p.Step(progressed).String())
	}
	if strings.Join(got, " ") != "1s 1.5s 2.25s 3.375s 5s 5s 2s 2s 2s" {
		t.Errorf("schedule %v", got)
	}
	// Calls to follow a 10-minute deployment with an event every 2 s, 10 s or 1 min: one
	// DescribeStackEvents per poll plus a DescribeStacks every fifth.
	for _, every := range []time.Duration{2 * time.Second, 10 * time.Second, 60 * time.Second} {
		p := (&Deployer{}).poller()
		polls, next := 0, every
		for at := time.Duration(0); at < 10*time.Minute; polls++ {
			progressed := at >= next
			if progressed {
				next += every
			}
			at += p.Step(progressed)
		}
		calls := polls + polls/5
		t.Logf("10-minute deployment, an event every %s: %d polls, about %d calls (the CDK CLI: %d)", every, polls, calls, 600/2+600/5)
		if calls > 600/2+600/5 {
			t.Errorf("more calls than the CDK CLI's fixed 2 s/5 s polling: %d", calls)
		}
	}
}

// --timeout bounds publishing as well: an asset upload that never ends fails its stack (and
// skips its dependents) instead of holding the deploy forever.
func TestPublishingIsBoundedByTheTimeout(t *testing.T) {
	d := &Deployer{Timeout: 50 * time.Millisecond, BeforeStack: func(ctx context.Context, s deployplan.Stack) error {
		<-ctx.Done() // an upload whose endpoint never answers
		return ctx.Err()
	}}
	plan := &deployplan.Plan{Stacks: []deployplan.Stack{{ID: "A"}, {ID: "B", DependsOn: []string{"A"}}}}
	done := make(chan []Outcome)
	go func() {
		out, _ := d.Run(context.Background(), plan)
		done <- out
	}()
	select {
	case out := <-done:
		if out[0].Result != Failed || !strings.Contains(out[0].Error, "not published within 50ms (--timeout)") || out[1].Result != Skipped {
			t.Errorf("outcomes: %+v", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("publishing was not bounded")
	}
}
