package render

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// The verdict comes from the gates and the diff: what no approval lifts blocks, what an approval
// lifts needs one, approvals that cover everything approve, and a change no gate stops is safe.
func TestReviewVerdict(t *testing.T) {
	t.Parallel()
	changed := []*cfndiff.StackDiff{cfndiff.DiffTemplates("Net", template(t, `"Q": {"Type": "AWS::SQS::Queue"}`),
		template(t, `"Q": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 5}}`), cfndiff.Options{})}
	failing := func(name string) review.Gate {
		return review.Gate{Name: name, Triggered: true, Enforced: true, Items: []string{"x"}}
	}
	approved := review.Gate{Name: review.GateDestroy, Triggered: true, Enforced: true, Overridden: true, Items: []string{"x"}}
	warned := review.Gate{Name: review.GateReplace, Triggered: true, Items: []string{"x"}} // not in fail-on
	for _, tc := range []struct {
		name string
		rep  review.Report
		want Verdict
		line string
	}{
		{"nothing", review.Report{}, NoChanges, "### ✅ no changes · cdkbot review\n"},
		{"a change", review.Report{Stacks: changed, Gates: []review.Gate{warned}}, Safe, "### ✅ safe · cdkbot review\n"},
		{"approved", review.Report{Stacks: changed, Gates: []review.Gate{approved}}, Approved,
			"### ✅ approved · cdkbot review\n"},
		{"approvable", review.Report{Stacks: changed, Gates: []review.Gate{approved, failing(review.GateDestroyStateful)}},
			NeedsApproval, "### ⚠️ needs approval · cdkbot review\n"},
		{"cannot deploy", review.Report{Stacks: changed, Gates: []review.Gate{failing(review.GateDestroy),
			failing(review.GateIncomplete)}}, Blocked, "### ❌ blocked · cdkbot review\n"},
		{"no change, cannot deploy", review.Report{Gates: []review.Gate{failing(review.GateIncomplete)}}, Blocked, ""},
		{"base unreadable", review.Report{BaseUnavailable: "synth failed"}, Blocked, ""},
	} {
		if got := ReviewVerdict(&tc.rep); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		var b bytes.Buffer
		if err := ReviewMarkdown(&b, &tc.rep, 0); err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(b.String(), " -->\n")
		if !strings.HasPrefix(body, verdictLine(tc.want)) || (tc.line != "" && verdictLine(tc.want) != tc.line) {
			t.Errorf("%s: the comment does not open with its verdict:\n%s", tc.name, body)
		}
		title := ReviewHeadline(&tc.rep)
		if !strings.HasPrefix(title, tc.want.Glyph()+" "+tc.want.String()) || strings.HasSuffix(title, "blocked") &&
			tc.want != Blocked {
			t.Errorf("%s: check run title %q", tc.name, title)
		}
	}
}

// A gate's caution says what its items share once, then lists them: two exports in use are two
// items under one explanation, not the explanation twice.
func TestOneCautionPerGate(t *testing.T) {
	t.Parallel()
	rep := &review.Report{Key: "k", OverrideLabel: "ok", Gates: []review.Gate{
		{Name: review.GateExportInUse, Triggered: true, Enforced: true, Items: []string{
			"Data: export Data:ExportsOutputRefOrders (Orders is replaced) is imported by Service",
			"Data: export Data:ExportsOutputFnGetAttOrdersArn (Orders is replaced) is imported by Service",
		}},
		{Name: review.GateDestroyStateful, Triggered: true, Enforced: true, Items: []string{"Orders in Data: deleted"}},
	}}
	var b bytes.Buffer
	if err := ReviewMarkdown(&b, rep, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "Deploy in two steps"); n != 1 {
		t.Errorf("the export-in-use explanation is said %d times:\n%s", n, out)
	}
	if n := strings.Count(out, "> [!CAUTION]"); n != 2 {
		t.Errorf("%d cautions for two gates:\n%s", n, out)
	}
	for _, want := range []string{
		"> - Data: export Data:ExportsOutputRefOrders \\(Orders is replaced\\) is imported by Service\n",
		"> **Blocked by `destroy-stateful`**: stateful resources are replaced or destroyed, and their data with them. " +
			"Add the label `ok` to approve.\n> - Orders in Data: deleted\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// Commits are linked only when they are hexadecimal SHAs and the repository an https URL: what
// arrives otherwise is shown as code, never as a link.
func TestProvenanceLinksOnlyWhatItTrusts(t *testing.T) {
	t.Parallel()
	sha := "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name string
		rep  review.Report
		l    Links
		want string
	}{
		{"linked", review.Report{HeadSHA: sha, BaseSHA: sha}, Links{Repository: "https://github.com/acme/shop",
			Run: "https://github.com/acme/shop/actions/runs/1"},
			"<sub>head [<code>0123456</code>](https://github.com/acme/shop/commit/" + sha + ") · base " +
				"[<code>0123456</code>](https://github.com/acme/shop/commit/" + sha + ") · " +
				"[workflow run](https://github.com/acme/shop/actions/runs/1)</sub>\n\n"},
		{"merge commit", review.Report{HeadSHA: sha, MergeSHA: "fedcba9876543210fedcba9876543210fedcba98"}, Links{},
			"<sub>reviewed <code>fedcba9</code> (head <code>0123456</code> merged into the base)</sub>\n\n"},
		{"not a SHA", review.Report{HeadSHA: "x)](https://evil.test"}, Links{Repository: "https://github.com/acme/shop"},
			"<sub>head <code>x)&#93;(htt</code></sub>\n\n"},
		{"not a URL", review.Report{HeadSHA: sha}, Links{Repository: "javascript:alert(1)", Run: "https://x.test/a b"},
			"<sub>head <code>0123456</code></sub>\n\n"},
		{"nothing known", review.Report{}, Links{}, ""},
	} {
		if got := provenance(&tc.rep, tc.l); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// The comment of a change that changes nothing, with the demo's policy: the verdict, then one line
// each for the unchanged stacks, compatibility and policy, the mutations collapsed.
func TestNoChangeReviewGolden(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../cli/demo/cdkbot.yml")
	if err != nil {
		t.Fatal(err)
	}
	policy, _, err := aspects.Load("cdkbot.yml", raw)
	if err != nil {
		t.Fatal(err)
	}
	a := loadAssembly(t, "../cli/demo/before")
	rep, err := review.Run(review.Input{Base: a, Head: a, Policy: policy, ToolSchemaMax: 55, Key: "k",
		HeadSHA: "0123456789abcdef0123456789abcdef01234567", BaseSHA: "89abcdef0123456789abcdef0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := ReviewComment(&md, rep, CommentView{Links: Links{Repository: "https://github.com/acme/shop",
		Run: "https://github.com/acme/shop/actions/runs/42/attempts/2", Command: true}}); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/review/no-change.md", md.Bytes())
	assertBalanced(t, md.String())
	_, body, _ := strings.Cut(md.String(), " -->\n")
	if lines := visibleLines(body); len(lines) > 8 {
		t.Errorf("a review that changes nothing shows %d lines:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

// The demo's review as the action posts it, with its links: the golden the README's example
// comes from.
func TestDemoReviewGolden(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../cli/demo/cdkbot.yml")
	if err != nil {
		t.Fatal(err)
	}
	policy, _, err := aspects.Load("cdkbot.yml", raw)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := review.Run(review.Input{Base: loadAssembly(t, "../cli/demo/before"),
		Head: loadAssembly(t, "../cli/demo/after"), Policy: policy, ToolSchemaMax: 55, Key: "k",
		HeadSHA: "0123456789abcdef0123456789abcdef01234567", BaseSHA: "89abcdef0123456789abcdef0123456789abcdef",
		MergeSHA: "fedcba9876543210fedcba9876543210fedcba98"})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := ReviewComment(&md, rep, CommentView{Links: Links{Repository: "https://github.com/acme/shop",
		Run: "https://github.com/acme/shop/actions/runs/42", Command: true}}); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/review/demo.md", md.Bytes())
	assertBalanced(t, md.String())
}

// visibleLines are the lines of a comment a reader sees before expanding anything: not blank, not
// inside a collapsed <details> block (its <summary> line is seen).
func visibleLines(md string) []string {
	var out []string
	depth := 0
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "<details>"):
			if depth == 0 {
				out = append(out, line)
			}
			depth++
		case strings.HasPrefix(line, "</details>"):
			depth--
		case depth == 0 && strings.TrimSpace(line) != "":
			out = append(out, line)
		}
	}
	return out
}

// Every gate a review can fail says why in its caution: a gate added without words would show
// a caution with nothing to act on.
func TestEveryGateSaysWhy(t *testing.T) {
	for _, name := range review.AllGates {
		if gateWhy[name] == "" {
			t.Errorf("gate %s has no explanation in gateWhy", name)
		}
	}
}
