package pipeline

import (
	"bytes"
	"strings"
	"testing"
)

// The app's output is written a line at a time, each line cleaned, prefixed with its side only
// when syntheses run side by side; a line that never ends is written in bounded pieces.
func TestSideLogsCleanEveryLine(t *testing.T) {
	t.Parallel()
	for _, prefix := range []bool{false, true} {
		var out bytes.Buffer
		logs := newSideLogs(&out, prefix)
		head, base := logs.side("head"), logs.side("base")
		head.Write([]byte("::add-mask::sec"))
		base.Write([]byte("base line\r\n"))
		head.Write([]byte("ret\n  ::stop-commands::tok\n\x1b[2J ##[error]x Tab\u200ble\n::error::unterminated"))
		logs.flush()
		want := "base line\n\\x3a:add-mask::secret\n  \\x3a:stop-commands::tok\n\\x1b[2J ##\\x5berror]x Tab\\u200ble\n\\x3a:error::unterminated\n"
		if prefix {
			want = "base: base line\nhead: \\x3a:add-mask::secret\nhead:   \\x3a:stop-commands::tok\n" +
				"head: \\x1b[2J ##\\x5berror]x Tab\\u200ble\nhead: \\x3a:error::unterminated\n"
		}
		if out.String() != want {
			t.Errorf("prefix %v:\n%s\nwant\n%s", prefix, out.String(), want)
		}
	}
	var out bytes.Buffer
	logs := newSideLogs(&out, false)
	for range 3 * maxLogLine / 1024 {
		logs.side("head").Write([]byte(strings.Repeat("x", 1024)))
	}
	if n := strings.Count(out.String(), "\n"); n < 2 || out.Len() < 2*maxLogLine {
		t.Errorf("a line without end is held back: %d bytes in %d lines written", out.Len(), n)
	}
}
