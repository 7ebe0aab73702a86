package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Every string cdkbot did not write itself — an id, name, value or reason from an assembly, a
// pull request, AWS, or the output of the app it synthesizes — reaches a reader through one
// escaping, whatever the output: Clean for one value of a log or terminal line, CleanLines for
// text of several lines, mdText, mdHTML and mdCode for Markdown (markdown.go), cleanJSON for the
// JSON views. All of them show the same runes as visible escapes (unsafeRune), so a character
// that cannot hide in a log cannot hide in a comment either:
//
//   - line breaks and C0/C1 controls, ESC among them (terminal escapes: CSI, OSC hyperlinks);
//   - bidirectional controls (Trojan Source) and invisible characters (zero-width spaces and
//     joiners, word joiners, tag characters, variation selectors, fillers), so that "Tab\u200ble"
//     cannot pass for "Table";
//   - workflow commands: GitHub's runner runs a line that starts with "::" once its leading white
//     space is trimmed, and a legacy "##[command]" anywhere in a line.
//
// Markdown also breaks autolinks: URLs, www. names, e-mail addresses, @mentions (markdown.go).

// Clean makes a value from an assembly, AWS or a pull request safe to print on one log line:
// line breaks and other control characters (terminal escapes among them), bidirectional controls
// and invisible characters become visible escapes, and a value that would start a workflow
// command ("::error::…" at the start of a line, "##[error]" anywhere) is shown with an escape
// that keeps GitHub's runner from reading it as one. The value can neither start a new line nor
// rewrite the terminal nor disguise itself.
func Clean(s string) string { return neutraliseCommands(escapeUnsafe(s, false)) }

// CleanLines is Clean for text of several lines (the app's output, a multi-line error): each
// line is cleaned, line feeds stay.
func CleanLines(s string) string {
	if !needsCleaning(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Clean(l)
	}
	return strings.Join(lines, "\n")
}

// needsCleaning is false when Clean would change nothing in any line of s.
func needsCleaning(s string) bool {
	return strings.Contains(s, "::") || strings.Contains(s, "##[") || strings.ContainsFunc(s, unsafeRune)
}

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

// neutraliseCommands escapes what GitHub's runner would read as a workflow command in a value
// that has no line breaks left: a leading "::" (after white space, which the runner trims, as
// Unicode does) and "##[" anywhere. A value printed after cdkbot's own indentation starts its
// line as far as the runner is concerned, so every value is treated as if it did.
func neutraliseCommands(s string) string {
	if rest := strings.TrimLeftFunc(s, unicode.IsSpace); strings.HasPrefix(rest, "::") {
		s = s[:len(s)-len(rest)] + `\x3a` + rest[1:]
	}
	return strings.ReplaceAll(s, "##[", `##\x5b`)
}

// unsafeRune reports the runes no output shows as they are: C0 and C1 controls, DEL, the
// replacement character (what invalid UTF-8 decodes to), bidirectional controls and invisible
// characters.
func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == unicode.ReplacementChar || bidi(r) || invisible(r)
}

// bidi reports the Unicode bidirectional formatting characters (embeddings, overrides,
// isolates, marks).
func bidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// invisible reports the characters that take no room or look like white space while being
// something else: format characters (zero-width space, joiners, word joiner, soft hyphen, byte
// order mark, tag characters), line and paragraph separators, variation selectors, and the
// other default-ignorable code points (fillers, the combining grapheme joiner).
func invisible(r rune) bool {
	if r < 0xad {
		return false // the common case: ASCII and Latin-1 letters
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Variation_Selector,
		unicode.Other_Default_Ignorable_Code_Point)
}

func quoteRune(r rune) string {
	switch {
	case r <= 0xff:
		return fmt.Sprintf(`\x%02x`, r)
	case r > 0xffff:
		return fmt.Sprintf(`\U%08x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// cleanJSON makes encoded JSON safe to print: every unsafe rune (all of them are inside
// strings, JSON's own syntax being ASCII) becomes its \u escape and "##[" becomes "##\u005b",
// so a reader of the JSON gets the same values while a terminal or GitHub's runner sees no
// control, invisible character or workflow command. (A line of JSON never starts with "::".)
func cleanJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte("##[")) && !bytes.ContainsFunc(b, unsafeInJSON) {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	for i := 0; i < len(b); {
		if bytes.HasPrefix(b[i:], []byte("##[")) {
			out = append(out, `##\u005b`...)
			i += 3
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...) // encoding/json never writes invalid UTF-8; kept safe anyway
		case unsafeInJSON(r) && r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		case unsafeInJSON(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// encodeJSON is how every JSON view writes: v encoded (indented by indent unless "", with <, >
// and & escaped when escapeHTML), then cleanJSON.
func encodeJSON(w io.Writer, v any, indent string, escapeHTML bool) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(cleanJSON(b.Bytes()))
	return err
}

// unsafeInJSON is unsafeRune past ASCII's controls: encoding/json escapes those inside strings,
// and outside them they are the JSON's own line breaks and indentation.
func unsafeInJSON(r rune) bool { return r >= 0x7f && unsafeRune(r) }
