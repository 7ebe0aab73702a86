package render

import (
	"strings"
	"sync"
	"unicode"
)

// Markdown escaping for strings that come from templates or pull requests. Such strings are
// untrusted: a resource name or property value must not be able to close a <details> block,
// break a table, inject HTML, link anywhere or @mention people, nor reorder or hide what
// reviewers read with bidirectional controls or invisible characters (shown as escapes, as in
// logs: clean.go).

// codeEscaper makes text safe inside HTML (<code>, <b>, <sub>): every character Markdown or
// HTML could act on becomes an entity.
var codeEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "|", "&#124;", "`", "&#96;",
	"*", "&#42;", "_", "&#95;", "[", "&#91;", "]", "&#93;", "~", "&#126;", "\\", "&#92;",
	"\r\n", " ⏎ ", "\n", " ⏎ ", "\r", " ⏎ ", "\t", " ",
)

// mdCode renders s as inline code safe inside a table cell, truncated to limit bytes.
func mdCode(s string, limit int) string {
	return "<code>" + mdHTML(truncate(s, limit)) + "</code>"
}

// mdValue renders a value (JSON, an ARN, a path) as mdCode does, with line-break opportunities
// (<wbr>: invisible, copied as nothing) after its commas, so long JSON wraps inside its table
// cell instead of stretching the table past the page (browsers break no line after a comma
// that a quote or a letter follows).
func mdValue(s string, limit int) string {
	s = truncate(s, limit)
	if len(s) <= 32 {
		return mdCode(s, 0)
	}
	return "<code>" + valueBreaker.Replace(mdHTML(s)) + "</code>"
}

var valueBreaker = strings.NewReplacer(",", ",<wbr>")

// mdSpan renders s as a Markdown code span (`s`) when it holds only characters that read the
// same there (a label, a gate's name), else as mdCode: a code span shows entities as written.
func mdSpan(s string, limit int) string {
	s = truncate(s, limit)
	plain := s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_./:+=@#", r) || unsafeRune(r)
	})
	if plain {
		return "`" + s + "`"
	}
	return mdCode(s, 0)
}

// mdHTML escapes s for use inside an HTML element of a comment (<code>, <b>, <summary>, <sub>).
func mdHTML(s string) string { return unlinker().Replace(codeEscaper.Replace(escapeUnsafe(s, true))) }

var textEscaper = strings.NewReplacer(
	"\\", "\\\\", "`", "\\`", "*", "\\*", "_", "\\_", "{", "\\{", "}", "\\}", "[", "\\[", "]", "\\]",
	"<", "&lt;", ">", "&gt;", "(", "\\(", ")", "\\)", "#", "\\#", "+", "\\+", "!", "\\!", "|", "\\|",
	"~", "\\~", "&", "&amp;", "\r\n", " ", "\n", " ", "\r", " ",
)

// mdProse renders cdkbot's own sentences (a compatibility finding, what to do), where `…` marks a
// command or a name: those parts as code (mdCode), the rest as text (mdText). An unpaired
// backtick is text. Everything in them is escaped as data, since sentences quote the assembly.
func mdProse(s string) string {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 0:
			b.WriteString(mdText(p))
		case i == len(parts)-1: // unpaired: the backtick is text
			b.WriteString(mdText("`" + p))
		default:
			b.WriteString(mdCode(p, 0))
		}
	}
	return b.String()
}

// mdText escapes s for use as plain Markdown text.
func mdText(s string) string { return unlinker().Replace(textEscaper.Replace(escapeUnsafe(s, true))) }

// unlinker keeps GitHub from turning escaped text into links: it puts an empty <wbr> element
// (a line-break opportunity: invisible, copied as nothing) where an autolink or a mention would
// begin, so the text reads and copies as written and links nowhere. GitHub's Markdown recognises
// extended autolinks on the raw text (cmark-gfm's autolink extension: "http://", "https://" and
// "ftp://" in any letter case, and "www."), and e-mail addresses and @mentions in each text node
// of the HTML; the element splits the pattern in both. Other schemes ("aws://", "s3://") link
// nowhere and are left alone. Applied after the escapers: their entities contain none of these.
// Built on first use, as the regular expressions of this package are: not at every start.
var unlinker = sync.OnceValue(func() *strings.Replacer { return strings.NewReplacer(unlinkPairs()...) })

func unlinkPairs() []string {
	pairs := []string{"@", "@<wbr>"}
	for _, w := range letterCases("www") {
		pairs = append(pairs, w+".", w+"<wbr>.")
	}
	for _, scheme := range []string{"http", "https", "ftp"} {
		for _, s := range letterCases(scheme) {
			pairs = append(pairs, s+"://", s+":<wbr>//")
		}
	}
	return pairs
}

// letterCases is word (ASCII lower-case letters) in every combination of upper and lower case.
func letterCases(word string) []string {
	out := []string{""}
	for _, c := range word {
		var next []string
		for _, prefix := range out {
			next = append(next, prefix+string(c), prefix+strings.ToUpper(string(c)))
		}
		out = next
	}
	return out
}

func truncate(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// boundedRows collects table rows up to a byte budget, counting those left out, so a long
// table shrinks instead of pushing the comment past GitHub's limit.
type boundedRows struct {
	budget, size, total int
	rows                []string
}

func (b *boundedRows) add(row string) {
	b.total++
	if b.size+len(row) > b.budget {
		return
	}
	b.size += len(row) + 1
	b.rows = append(b.rows, row)
}

func (b *boundedRows) omitted() int { return b.total - len(b.rows) }
