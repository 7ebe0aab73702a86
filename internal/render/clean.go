package render

import (
	"strings"
	"unicode"
)

// Clean makes a value from an assembly, AWS or a pull request safe to print on one log line:
// line breaks and other control characters (terminal escapes among them) and the bidirectional
// controls that reorder what a reader sees become visible escapes, so a value can neither start
// a new line — where GitHub would run "::error::…" as a workflow command — nor rewrite the
// terminal or disguise itself.
func Clean(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteRune(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || bidi(r) || r == unicode.ReplacementChar:
			b.WriteString(quoteRune(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsCleaning(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || bidi(r) || r == unicode.ReplacementChar {
			return true
		}
	}
	return false
}

// bidi reports the Unicode bidirectional formatting characters (embeddings, overrides,
// isolates, marks).
func bidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

func quoteRune(r rune) string {
	const hex = "0123456789abcdef"
	if r <= 0xff {
		return `\x` + string(hex[r>>4]) + string(hex[r&0xf])
	}
	out := []byte(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		out = append(out, hex[(r>>uint(shift))&0xf])
	}
	return string(out)
}
