package render

import (
	"fmt"
	"strings"
	"unicode"
)

// Clean makes a value from an assembly, AWS or a pull request safe to print on one log line:
// line breaks and other control characters (terminal escapes among them) and the bidirectional
// controls that reorder what a reader sees become visible escapes, so a value can neither start
// a new line — where GitHub would run "::error::…" as a workflow command — nor rewrite the
// terminal or disguise itself.
func Clean(s string) string { return escapeUnsafe(s, false) }

// escapeUnsafe shows unsafe runes as escapes and tabs as spaces; with keepBreaks, line breaks
// stay for the Markdown escapers, which turn them into spaces or ⏎ themselves.
func escapeUnsafe(s string, keepBreaks bool) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteRune(' ')
		case keepBreaks && (r == '\n' || r == '\r'):
			b.WriteRune(r)
		case unsafeRune(r):
			b.WriteString(quoteRune(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// unsafeRune reports C0 and C1 controls, DEL, bidirectional controls and the replacement
// character (what invalid UTF-8 decodes to).
func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || bidi(r) || r == unicode.ReplacementChar
}

// bidi reports the Unicode bidirectional formatting characters (embeddings, overrides,
// isolates, marks).
func bidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

func quoteRune(r rune) string {
	if r <= 0xff {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}
