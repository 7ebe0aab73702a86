package render

import (
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"
)

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
		// Invisible characters are shown: Tab\u200ble is not Table.
		"Tab\u200ble":                                       `Tab\u200ble`,
		"zw\u200c\u200d\u2060\ufeffj":                       `zw\u200c\u200d\u2060\ufeffj`,
		"soft\u00adhyphen":                                  `soft\xadhyphen`,
		"line\u2028para\u2029":                              `line\u2028para\u2029`,
		"tag\U000E0041\U000E007F":                           `tag\U000e0041\U000e007f`,
		"vs\ufe0f\U000E0100 filler\u3164":                   `vs\ufe0f\U000e0100 filler\u3164`,
		"osc \x1b]8;;https://evil.test\x07link\x1b]8;;\x07": `osc \x1b]8;;https://evil.test\x07link\x1b]8;;\x07`,
		// Workflow commands: a leading "::" (the runner trims white space first, Unicode's too)
		// and a legacy "##[" anywhere. A "::" inside a value (an ARN, a type) stays.
		"::add-mask::secret":               `\x3a:add-mask::secret`,
		"  ::stop-commands::t":             `  \x3a:stop-commands::t`,
		"\u00a0\u3000::error::x":           "\u00a0\u3000\\x3a:error::x",
		"\t::warning::x":                   ` \x3a:warning::x`,
		"x ##[error]forged ##[group]":      `x ##\x5berror]forged ##\x5bgroup]`,
		"arn:aws:iam::123456789012:role/x": "arn:aws:iam::123456789012:role/x",
		"AWS::SQS::Queue":                  "AWS::SQS::Queue",
		":single":                          ":single",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// Text of several lines keeps its line feeds and has each line cleaned.
func TestCleanLines(t *testing.T) {
	t.Parallel()
	in := "npm warn ok\n::add-mask::secret\r\n  ::stop-commands::tok\n\x1b[2Jdone\u200b"
	want := "npm warn ok\n\\x3a:add-mask::secret\\x0d\n  \\x3a:stop-commands::tok\n\\x1b[2Jdone\\u200b"
	if got := CleanLines(in); got != want {
		t.Errorf("CleanLines = %q, want %q", got, want)
	}
	if got := CleanLines("plain\ntext"); got != "plain\ntext" {
		t.Errorf("plain text changed: %q", got)
	}
}

// JSON views keep their values (a reader decodes the same strings) and show no control,
// invisible character or legacy workflow command.
func TestCleanJSON(t *testing.T) {
	t.Parallel()
	v := map[string]any{"id": "a\u200bb\u202ec ##[error]x \x1b[2J \u0085 \U000E0041 é ✓ \ufffd", "n": []any{1, "::add-mask::s"}}
	var b strings.Builder
	if err := encodeJSON(&b, v, "  ", false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsFunc(out, func(r rune) bool { return r >= 0x7f && unsafeRune(r) }) || strings.Contains(out, "##[") ||
		strings.Contains(out, "\x1b") {
		t.Errorf("unsafe JSON:\n%s", out)
	}
	if !strings.Contains(out, `a\u200bb\u202ec ##\u005berror]x`) || !strings.Contains(out, `\udb40\udc41 é ✓`) {
		t.Errorf("escapes:\n%s", out)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(v)
	got, _ := json.Marshal(back)
	if string(got) != string(want) {
		t.Errorf("values changed:\n%s\n%s", got, want)
	}
}

// Comments neutralise the same runes: a logical id cannot reorder what a reviewer reads
// (Trojan Source), hide characters or carry terminal escapes; line breaks stay the escapers'
// business.
func TestMarkdownEscapesUnsafeRunes(t *testing.T) {
	t.Parallel()
	if got, want := mdText("admin\u202e1gnp.exe\nnext"), `admin\\u202e1gnp.exe next`; got != want {
		t.Errorf("mdText = %q, want %q", got, want)
	}
	if got, want := mdCode("red\x1b[31m\u2066x\nz", 0), `<code>red&#92;x1b&#91;31m&#92;u2066x ⏎ z</code>`; got != want {
		t.Errorf("mdCode = %q, want %q", got, want)
	}
	if got, want := mdText("Tab\u200ble"), `Tab\\u200ble`; got != want {
		t.Errorf("mdText = %q, want %q", got, want)
	}
}

// gfmAutolinks finds what GitHub would turn into a link or a mention: extended autolinks
// (http://, https://, ftp://, www.), e-mail addresses and @mentions, in the Markdown as written
// and with its entities decoded (a renderer that decodes first must not find one either).
func gfmAutolinks(md string) []string {
	var found []string
	for _, text := range []string{md, html.UnescapeString(md)} {
		found = append(found, gfmAutolink.FindAllString(text, -1)...)
	}
	return found
}

var gfmAutolink = regexp.MustCompile(`(?i)(?:(?:https?|ftp)://|\bwww\.)[^\s<]*` + // URLs, www. names
	`|[a-z0-9.+_-]+@[a-z0-9_-]+(?:\.[a-z0-9_-]+)+` + // e-mail addresses
	`|(?:^|[^a-z0-9_` + "`" + `])@[a-z0-9][a-z0-9-]*(?:/[a-z0-9_-]+)?`) // @user, @org/team

// Autolinks are broken where they begin, by an empty <wbr>: the text reads and copies as
// written, and links nowhere.
func TestMarkdownBreaksAutolinks(t *testing.T) {
	t.Parallel()
	in := "see https://evil.test/x, HTTP://EVIL.TEST, ftp://f.test, www.evil.test, WwW.Evil.test, " +
		"a.b+c@evil.test, @org/team and @octocat, mailto:x@evil.test"
	for name, out := range map[string]string{"mdText": mdText(in), "mdCode": mdCode(in, 0), "mdHTML": mdHTML(in)} {
		if found := gfmAutolinks(out); len(found) > 0 {
			t.Errorf("%s leaves links %q:\n%s", name, found, out)
		}
		visible := html.UnescapeString(strings.NewReplacer("<wbr>", "", "<code>", "", "</code>", "", `\`, "").Replace(out))
		if visible != in {
			t.Errorf("%s changes the text:\n%s\n%s", name, visible, in)
		}
	}
	if found := gfmAutolink.FindAllString(in, -1); len(found) != 9 {
		t.Errorf("the checker finds %d links in the raw text, want 9: %q", len(found), found)
	}
	// A code span stays a code span only when it reads the same there.
	if got := mdSpan("cdkbot/approve-destructive", 100); got != "`cdkbot/approve-destructive`" {
		t.Errorf("mdSpan = %q", got)
	}
	if got := mdSpan("a`b\u200b", 100); got != `<code>a&#96;b&#92;u200b</code>` {
		t.Errorf("mdSpan = %q", got)
	}
}

// The rune rules are one: a rune no log shows as it is, no comment shows either, and every
// other rune a log shows as it is.
func TestOneRuleForEveryOutput(t *testing.T) {
	t.Parallel()
	for r := rune(0); r < 0xe1000; r++ {
		switch {
		case r >= 0xd800 && r <= 0xdfff:
			continue
		case r == 0x20000:
			r = 0xe0000 // planes 2 to 13 hold CJK ideographs and nothing else
		}
		s := "a" + string(r) + "b"
		outs := map[string]string{"Clean": Clean(s), "mdText": mdText(s), "mdCode": mdCode(s, 0), "mdHTML": mdHTML(s)}
		for name, out := range outs {
			if unsafeRune(r) && strings.ContainsRune(out, r) {
				t.Fatalf("%U: %s shows it: %q", r, name, out)
			}
		}
		if !unsafeRune(r) && !strings.ContainsRune(outs["Clean"], r) {
			t.Fatalf("%U: Clean hides it: %q", r, outs["Clean"])
		}
	}
}
