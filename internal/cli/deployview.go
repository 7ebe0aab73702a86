package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/render"
)

// deployView shows a deployment as it happens, in the form that reads well where it runs: a
// live table of stacks on a terminal; in GitHub Actions one line per stack start, then each
// finished stack's events folded into a group; elsewhere (a piped log) one line per event.
type deployView struct {
	w      io.Writer
	gha    *ghaction.Runtime
	mu     sync.Mutex
	rows   []*deployRow
	byID   map[string]*deployRow
	events map[string][]string // per stack, for the Actions groups
	live   *painter
	total  int
	done   int
}

type deployRow struct {
	id, state, last string
	started         time.Time
	took            time.Duration
}

func newDeployView(w io.Writer, plan *deployplan.Plan, gha *ghaction.Runtime) *deployView {
	v := &deployView{w: w, gha: gha, byID: map[string]*deployRow{}, events: map[string][]string{}, total: len(plan.Stacks)}
	for _, s := range plan.Stacks {
		r := &deployRow{id: s.ID, state: "waiting"}
		v.rows = append(v.rows, r)
		v.byID[s.ID] = r
	}
	if gha == nil && isTerminal(w) && len(plan.Stacks) > 0 {
		v.live = newPainter(w, &v.mu, v.frame)
	}
	return v
}

// eventLine is one CloudFormation event for the log; every part comes from AWS or the
// template, so it is cleaned of line breaks, escapes and bidi controls.
func eventLine(e deployplan.Event) string {
	line := strings.TrimSpace(fmt.Sprintf("%s %s %s",
		render.Clean(e.Status), render.Clean(e.ResourceType), render.Clean(e.LogicalID)))
	if e.Reason != "" {
		line += ": " + render.Clean(e.Reason)
	}
	return line
}

func (v *deployView) Event(e deployplan.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	line := eventLine(e)
	switch {
	case v.live != nil:
		if r := v.byID[e.Stack]; r != nil {
			r.last = line
		}
	case v.gha != nil:
		v.events[e.Stack] = append(v.events[e.Stack], line)
	default:
		fmt.Fprintf(v.w, "cdkbot: %s | %s\n", render.Clean(e.Stack), line)
	}
}

// Line reports something about a stack that is not a CloudFormation event (its assets).
func (v *deployView) Line(stack, text string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case v.live != nil:
		if r := v.byID[stack]; r != nil {
			r.last = text
		}
	case v.gha != nil:
		v.events[stack] = append(v.events[stack], render.Clean(text))
	default:
		fmt.Fprintf(v.w, "cdkbot: %s: %s\n", render.Clean(stack), render.Clean(text))
	}
}

func (v *deployView) Progress(p deployplan.Progress) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.byID[p.Stack]
	if r == nil {
		return
	}
	switch p.Phase {
	case deployplan.Publishing:
		r.state, r.started = "publishing", time.Now()
		if v.live == nil {
			fmt.Fprintf(v.w, "cdkbot: %s: publishing its assets\n", render.Clean(p.Stack))
		}
	case deployplan.Deploying:
		r.state = "deploying"
		if r.started.IsZero() {
			r.started = time.Now()
		}
		if v.live == nil {
			fmt.Fprintf(v.w, "cdkbot: %s: deploying\n", render.Clean(p.Stack))
		}
	case deployplan.Finished:
		v.done++
		o := p.Outcome
		r.state, r.took = string(o.Result), o.Duration
		if o.Status != "" {
			r.last = o.Status
		}
		if v.live != nil {
			return
		}
		head := fmt.Sprintf("cdkbot: [%d/%d] %s: %s", v.done, v.total, render.Clean(p.Stack), o.Result)
		if o.Duration > 0 {
			head += fmt.Sprintf(" (%s)", o.Duration.Round(100*time.Millisecond))
		}
		if o.Reason != "" {
			head += ": " + render.Clean(o.Reason)
		}
		if v.gha == nil {
			fmt.Fprintln(v.w, head)
			return
		}
		// Actions cannot interleave groups, so a stack's events are shown when it is done.
		v.gha.Group(head)
		for _, l := range v.events[p.Stack] {
			fmt.Fprintln(v.w, l)
		}
		v.gha.EndGroup()
		if !o.Result.OK() && o.Result != deployplan.Skipped {
			v.gha.Error("cdkbot deploy: %s", render.CleanLines(firstNonEmpty(o.Error, string(o.Result))))
		}
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// frame is the live table: result or phase, stack, elapsed time and the latest event.
func (v *deployView) frame() []string {
	width := 0
	for _, r := range v.rows {
		width = max(width, len(r.id))
	}
	lines := make([]string, 0, len(v.rows))
	for _, r := range v.rows {
		t := ""
		switch {
		case r.took > 0:
			t = r.took.Round(100 * time.Millisecond).String()
		case !r.started.IsZero():
			t = time.Since(r.started).Round(time.Second).String()
		}
		line := fmt.Sprintf("%-10s %-*s %7s  %s",
			r.state, width, render.Clean(r.id), t, truncateLine(render.Clean(r.last), 100))
		lines = append(lines, strings.TrimRight(line, " "))
	}
	return lines
}

func truncateLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (v *deployView) Stop() {
	if v.live != nil {
		v.live.stop()
	}
}
