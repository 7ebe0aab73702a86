package render

import (
	"fmt"
	"io"
	"sync"

	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// PublishListener hears every step of publishing (publish.Event is publishplan.Event).
type PublishListener interface {
	Event(publishplan.Event)
}

// PublishLog reports each publishing step as it happens, one line each with a running count,
// so a CI log shows progress on long uploads and which asset is slow.
type PublishLog struct {
	mu          sync.Mutex
	w           io.Writer
	total, done int
}

// NewPublishLog writes to w the steps of a run with destinations asset × destination pairs.
func NewPublishLog(w io.Writer, destinations int) *PublishLog {
	return &PublishLog{w: w, total: destinations}
}

// Event writes the step's line.
func (l *PublishLog) Event(e publishplan.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e.State {
	case publishplan.Packaging:
		fmt.Fprintf(l.w, "cdkbot: zipping %.12s\n", Clean(e.Asset))
	case publishplan.Uploading:
		if e.Sent == 0 {
			fmt.Fprintf(l.w, "cdkbot: uploading %.12s → %s (%d bytes)\n", Clean(e.Asset), Clean(e.Destination), e.Bytes)
		}
	case publishplan.Published, publishplan.Present, publishplan.Missing, publishplan.Failed:
		l.done++
		fmt.Fprintf(l.w, "cdkbot: [%d/%d] %.12s → %s: %s\n",
			l.done, l.total, Clean(e.Asset), Clean(e.Destination), e.State)
	}
}

// PublishBoard is the live table of a publishing run: one row per asset × destination with its
// state and, while uploading, the bytes sent, so a terminal user sees which asset is slow
// without a scrolling log. It is safe for concurrent use; a terminal redraws Frame.
type PublishBoard struct {
	mu    sync.Mutex
	rows  []*publishRow
	index map[string]*publishRow
}

type publishRow struct {
	asset, destination string
	state              publishplan.State
	sent, total        int64
}

// NewPublishBoard is an empty board.
func NewPublishBoard() *PublishBoard { return &PublishBoard{index: map[string]*publishRow{}} }

// Event records a publishing event; the next frame shows it.
func (b *PublishBoard) Event(e publishplan.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.Destination == "" { // packaging: shown on every row of the asset
		for _, r := range b.rows {
			if r.asset == e.Asset && r.state != publishplan.Present {
				r.state = e.State
			}
		}
		return
	}
	key := e.Asset + "\x00" + e.Destination
	r := b.index[key]
	if r == nil {
		r = &publishRow{asset: e.Asset, destination: e.Destination}
		b.index[key] = r
		b.rows = append(b.rows, r)
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

// Frame is the text of each row: state, asset, destination and, while uploading, progress.
func (b *PublishBoard) Frame() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := make([]string, 0, len(b.rows))
	for _, r := range b.rows {
		line := fmt.Sprintf("%-10s %.12s → %s", r.state, Clean(r.asset), Clean(r.destination))
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

// PublishFailures are the errors of a run's failed outcomes, one line each, for annotations.
func PublishFailures(s publishplan.Summary) []string {
	var out []string
	for _, oc := range s.Outcomes {
		if oc.State == publishplan.Failed {
			out = append(out, CleanLines(oc.Error))
		}
	}
	return out
}
