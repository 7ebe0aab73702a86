package render

import "testing"

func TestClean(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Bucket":                  "Bucket",
		"ok\n::error::forged":     `ok\x0a::error::forged`,
		"red \x1b[31mtext\x1b[0m": `red \x1b[31mtext\x1b[0m`,
		"admin\u202e1gnp.exe":     `admin\u202e1gnp.exe`,
		"tab\there":               "tab here",
		"naïve façade ✓":          "naïve façade ✓",
		"carriage\rreturn":        `carriage\x0dreturn`,
		"c1\u0085next":            `c1\x85next`,
		"isolate\u2066x\u2069":    `isolate\u2066x\u2069`,
		"\u200f":                  `\u200f`,
		string([]byte{0xff, 'a'}): `\ufffda`,
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// Comments neutralise the same runes: a logical id cannot reorder what a reviewer reads
// (Trojan Source) or carry terminal escapes; line breaks stay the escapers' business.
func TestMarkdownEscapesUnsafeRunes(t *testing.T) {
	t.Parallel()
	if got, want := mdText("admin\u202e1gnp.exe\nnext"), `admin\\u202e1gnp.exe next`; got != want {
		t.Errorf("mdText = %q, want %q", got, want)
	}
	if got, want := mdCode("red\x1b[31m\u2066x\nz", 0), `<code>red&#92;x1b&#91;31m&#92;u2066x ⏎ z</code>`; got != want {
		t.Errorf("mdCode = %q, want %q", got, want)
	}
}
