package pipeline

import (
	"bytes"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/cdkbot/cdkbot/internal/render"
)

// sideLogs carries the output of the apps cdkbot synthesizes to its log. That output is the
// pull request's: every line is cleaned (render.Clean) before it is written, whether one
// revision is synthesized or two, so an app cannot run a workflow command ("::add-mask::",
// "::stop-commands::"), rewrite the terminal or hide characters by printing them. When syntheses
// run side by side, each line is also prefixed with its side ("base: …") and written whole,
// never interleaved mid-line.
type sideLogs struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  bool
	pending map[string]*bytes.Buffer
}

func newSideLogs(w io.Writer, prefix bool) *sideLogs {
	if w == nil {
		w = io.Discard
	}
	return &sideLogs{w: w, prefix: prefix, pending: map[string]*bytes.Buffer{}}
}

// side returns the writer of one side's log.
func (l *sideLogs) side(name string) io.Writer { return sideWriter{l, name} }

type sideWriter struct {
	l    *sideLogs
	name string
}

func (s sideWriter) Write(p []byte) (int, error) {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	buf := s.l.pending[s.name]
	if buf == nil {
		buf = new(bytes.Buffer)
		s.l.pending[s.name] = buf
	}
	buf.Write(p)
	for {
		line, err := buf.ReadBytes('\n')
		if err != nil { // no newline yet: keep the start of the line
			rest := append([]byte(nil), line...)
			buf.Reset()
			buf.Write(rest)
			if buf.Len() > maxLogLine { // an app printing without line breaks: written in pieces
				err := s.l.write(s.name, buf.Bytes())
				buf.Reset()
				return len(p), err
			}
			return len(p), nil
		}
		if err := s.l.write(s.name, line[:len(line)-1]); err != nil {
			return len(p), err
		}
	}
}

// maxLogLine bounds what is held back waiting for the end of a line.
const maxLogLine = 64 << 10

// write writes one line (without its line feed) of side name's output, cleaned and prefixed
// (called with l.mu held).
func (l *sideLogs) write(name string, line []byte) error {
	text := render.Clean(string(bytes.TrimSuffix(line, []byte("\r"))))
	if l.prefix {
		text = name + ": " + text
	}
	_, err := io.WriteString(l.w, text+"\n")
	return err
}

// flush writes what is left of unterminated lines.
func (l *sideLogs) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(l.pending)) {
		if buf := l.pending[name]; buf.Len() > 0 {
			_ = l.write(name, buf.Bytes())
			buf.Reset()
		}
	}
}
