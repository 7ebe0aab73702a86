package pipeline

import (
	"bytes"
	"io"
	"maps"
	"slices"
	"sync"
)

// sideLogs keeps the output of syntheses that run side by side readable: each line is
// prefixed with its side ("base: …") and written whole, never interleaved mid-line.
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
func (l *sideLogs) side(name string) io.Writer {
	if !l.prefix {
		return l.w
	}
	return sideWriter{l, name}
}

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
			return len(p), nil
		}
		if _, err := s.l.w.Write(append([]byte(s.name+": "), line...)); err != nil {
			return len(p), err
		}
	}
}

// flush writes what is left of unterminated lines.
func (l *sideLogs) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(l.pending)) {
		if buf := l.pending[name]; buf.Len() > 0 {
			l.w.Write(append([]byte(name+": "), append(buf.Bytes(), '\n')...))
			buf.Reset()
		}
	}
}
