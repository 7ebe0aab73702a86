package render

import (
	"strings"
)

// Markdown escaping for strings that come from templates or pull requests. Such strings are
// untrusted: a resource name or property value must not be able to close a <details> block,
// break a table, inject HTML or @mention people, nor reorder what reviewers read with
// bidirectional controls (shown as escapes, as in logs).

var codeEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "|", "&#124;", "`", "&#96;",
	"*", "&#42;", "_", "&#95;", "[", "&#91;", "]", "&#93;", "~", "&#126;", "\\", "&#92;",
	"@", "@\u200b",
	"\r\n", " ⏎ ", "\n", " ⏎ ", "\r", " ⏎ ", "\t", " ",
)

// mdCode renders s as inline code safe inside a table cell, truncated to limit bytes.
func mdCode(s string, limit int) string {
	return "<code>" + codeEscaper.Replace(escapeUnsafe(truncate(s, limit), true)) + "</code>"
}

var textEscaper = strings.NewReplacer(
	"\\", "\\\\", "`", "\\`", "*", "\\*", "_", "\\_", "{", "\\{", "}", "\\}", "[", "\\[", "]", "\\]",
	"<", "&lt;", ">", "&gt;", "(", "\\(", ")", "\\)", "#", "\\#", "+", "\\+", "!", "\\!", "|", "\\|",
	"~", "\\~", "&", "&amp;", "@", "@\u200b", "\r\n", " ", "\n", " ", "\r", " ",
)

// mdText escapes s for use as plain Markdown text.
func mdText(s string) string { return textEscaper.Replace(escapeUnsafe(s, true)) }

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
