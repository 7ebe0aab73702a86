package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/cdkbot/cdkbot/internal/render"
)

// isTerminal is true when w is an interactive terminal that understands cursor movement.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb"
}

// liveDisplay redraws the publishing board (render.PublishBoard) in place while publishing
// runs, so a terminal user sees which asset is slow without a scrolling log.
type liveDisplay struct {
	*render.PublishBoard
	mu    sync.Mutex // held while a frame is drawn
	paint *painter
}

func newLiveDisplay(w io.Writer) *liveDisplay {
	d := &liveDisplay{PublishBoard: render.NewPublishBoard()}
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

// stop draws the final frame.
func (d *liveDisplay) stop() { d.paint.stop() }

// frame is the board's text, a line per asset × destination.
func (d *liveDisplay) frame() []string { return d.Frame() }
