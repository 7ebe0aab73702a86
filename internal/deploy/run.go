package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cdkbot/cdkbot/internal/deployplan"
)

// Run deploys the plan's stacks as a graph: a stack starts once the stacks it depends on and
// every stack of earlier waves have deployed, with at most Concurrency stacks at once. A
// failure skips the stacks that depend on it, directly or not, and every later wave, while
// independent stacks of the same wave finish. Outcomes come back in plan order with the first
// error (in plan order).
func (d *Deployer) Run(ctx context.Context, p *deployplan.Plan) ([]Outcome, error) {
	deployOne := func(ctx context.Context, s deployplan.Stack) (Outcome, error) {
		// A stack's time is its time in the slot: publishing its assets and deploying it.
		start := time.Now()
		timed := func(o Outcome, err error) (Outcome, error) {
			o.Duration = time.Since(start).Round(time.Millisecond)
			o.Seconds = o.Duration.Seconds()
			return o, err
		}
		if d.BeforeStack != nil {
			d.progress(Progress{Stack: s.ID, Phase: Publishing})
			// --timeout bounds publishing too: an asset upload that never ends fails its stack.
			pctx, cancel := context.WithTimeout(ctx, d.limit())
			err := d.BeforeStack(pctx, s)
			cancel()
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					err = fmt.Errorf("not published within %s (--timeout): %w", d.limit(), err)
				}
				err = fmt.Errorf("stack %s (%s): publish its assets: %w", s.ID, s.Env, err)
				return timed(Outcome{Stack: s.ID, Result: Failed, Error: err.Error()}, err)
			}
		}
		d.progress(Progress{Stack: s.ID, Phase: Deploying})
		return timed(d.Deploy(ctx, s))
	}
	n := d.Concurrency
	if n <= 0 {
		n = 4
	}
	outcomes, errs := schedule(ctx, p.Stacks, n, deployOne, func(o Outcome) {
		d.progress(Progress{Stack: o.Stack, Phase: Finished, Outcome: &o})
	})
	return outcomes, firstError(errs)
}

func (d *Deployer) progress(p Progress) {
	if d.Progress != nil {
		d.Progress(p)
	}
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// schedule runs deployOne over the stacks as their dependencies and waves allow, at most limit
// at once; finished hears each outcome as it happens (serialized). It is the orchestration
// alone, so it can be tested and benchmarked without CloudFormation.
func schedule(ctx context.Context, stacks []deployplan.Stack, limit int,
	deployOne func(context.Context, deployplan.Stack) (Outcome, error), finished func(Outcome)) ([]Outcome, []error) {
	outcomes := make([]Outcome, len(stacks))
	errs := make([]error, len(stacks))
	done := map[string]chan struct{}{}
	index := map[string]int{}
	for i, s := range stacks {
		done[s.ID] = make(chan struct{})
		index[s.ID] = i
	}
	slots := make(chan struct{}, limit)
	var mu sync.Mutex // serializes finished
	var wg sync.WaitGroup
	for i, s := range stacks {
		// What must be done first: the stack's dependencies in the plan, and every stack of an
		// earlier wave.
		var before []string
		for _, dep := range s.DependsOn {
			if _, ok := done[dep]; ok {
				before = append(before, dep)
			}
		}
		for _, o := range stacks {
			if o.Wave < s.Wave {
				before = append(before, o.ID)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[s.ID])
			finish := func(o Outcome, err error) {
				o.StackName, o.Environment = s.StackName, s.Env
				outcomes[i], errs[i] = o, err
				mu.Lock()
				defer mu.Unlock()
				if finished != nil {
					finished(o)
				}
			}
			var blockers []string
			for _, b := range before {
				select {
				case <-done[b]:
				case <-ctx.Done():
				}
				if ctx.Err() != nil {
					finish(Outcome{Stack: s.ID, Result: Skipped, Reason: "cancelled: " + ctx.Err().Error()}, nil)
					return
				}
				if !outcomes[index[b]].Result.OK() {
					blockers = append(blockers, b)
				}
			}
			if len(blockers) > 0 {
				finish(Outcome{Stack: s.ID, Result: Skipped, Reason: skipReason(s, blockers, stacks, index)}, nil)
				return
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				finish(Outcome{Stack: s.ID, Result: Skipped, Reason: "cancelled: " + ctx.Err().Error()}, nil)
				return
			}
			o, err := deployOne(ctx, s)
			<-slots
			finish(o, err)
		}()
	}
	wg.Wait()
	return outcomes, errs
}

// skipReason names what failed: the dependencies first, else the earlier wave.
func skipReason(s deployplan.Stack, blockers []string, stacks []deployplan.Stack, index map[string]int) string {
	var deps []string
	for _, b := range blockers {
		for _, d := range s.DependsOn {
			if d == b {
				deps = append(deps, b)
			}
		}
	}
	if len(deps) > 0 {
		return "depends on " + strings.Join(deps, ", ") + ", which did not deploy"
	}
	return fmt.Sprintf("an earlier wave did not deploy (%s, wave %d)", blockers[0], stacks[index[blockers[0]]].Wave+1)
}
