package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/cdkbot/cdkbot/internal/publishplan"
	"github.com/cdkbot/cdkbot/internal/render"
)

// isTerminal is true when w is an interactive terminal that understands cursor movement.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb"
}

// liveDisplay redraws one line per asset × destination in place while publishing runs, with
// bytes sent for uploads, so a terminal user sees which asset is slow without a scrolling log.
type liveDisplay struct {
	mu    sync.Mutex
	rows  []*liveRow
	index map[string]*liveRow
	paint *painter
}

type liveRow struct {
	asset, destination string
	state              publishplan.State
	sent, total        int64
}

func newLiveDisplay(w io.Writer) *liveDisplay {
	d := &liveDisplay{index: map[string]*liveRow{}}
	d.paint = newPainter(w, &d.mu, d.frame)
	return d
}

// painter redraws a frame of lines in place every 150 ms until stopped; frame is called with
// mu held, so it may read what the writers guard with mu.
type painter struct {
	w     io.Writer
	mu    *sync.Mutex
	frame func() []string
	drawn int // lines drawn by the previous frame
	done  chan struct{}
	wg    sync.WaitGroup
}

func newPainter(w io.Writer, mu *sync.Mutex, frame func() []string) *painter {
	p := &painter{w: w, mu: mu, frame: frame, done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				p.redraw()
			case <-p.done:
				return
			}
		}
	}()
	return p
}

// stop draws the final frame and ends the ticker.
func (p *painter) stop() {
	close(p.done)
	p.wg.Wait()
	p.redraw()
}

func (p *painter) redraw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn) // back to the top of the previous frame
	}
	lines := p.frame()
	for _, line := range lines {
		b.WriteString("\x1b[2K" + line + "\n")
	}
	p.drawn = len(lines)
	io.WriteString(p.w, b.String())
}

// event records a publishing event; the next frame shows it.
func (d *liveDisplay) event(e publishplan.Event) {
	if e.Destination == "" { // packaging: shown on every row of the asset
		d.mu.Lock()
		for _, r := range d.rows {
			if r.asset == e.Asset && r.state != publishplan.Present {
				r.state = e.State
			}
		}
		d.mu.Unlock()
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := e.Asset + "\x00" + e.Destination
	r := d.index[key]
	if r == nil {
		r = &liveRow{asset: e.Asset, destination: e.Destination}
		d.index[key] = r
		d.rows = append(d.rows, r)
	}
	r.state = e.State
	if e.Bytes > 0 {
		r.total = e.Bytes
	}
	r.sent = e.Sent
	if e.State == publishplan.Published {
		r.sent = r.total
	}
}

// stop draws the final frame.
func (d *liveDisplay) stop() { d.paint.stop() }

// frame is the text of each row: state, asset, destination and, while uploading, progress.
func (d *liveDisplay) frame() []string {
	lines := make([]string, 0, len(d.rows))
	for _, r := range d.rows {
		line := fmt.Sprintf("%-10s %.12s → %s", r.state, render.Clean(r.asset), render.Clean(r.destination))
		switch {
		case r.state == publishplan.Uploading && r.total > 0:
			line += fmt.Sprintf("  %s / %s (%d%%)", mib(r.sent), mib(r.total), r.sent*100/r.total)
		case r.state == publishplan.Published && r.total > 0:
			line += "  " + mib(r.total)
		}
		lines = append(lines, line)
	}
	return lines
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
