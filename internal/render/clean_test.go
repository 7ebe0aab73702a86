package render

import "testing"

func TestClean(t *testing.T) {
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
