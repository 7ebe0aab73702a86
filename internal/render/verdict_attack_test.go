package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/review"
)

// The verdict never says ✅ while a gate fails: over every gate, in every state, alone and after
// another, the verdict is needs approval or blocked exactly when the report failed, and blocked
// whenever a gate no approval lifts fails.
func TestVerdictNeverSafeWhileAGateFails(t *testing.T) {
	t.Parallel()
	changed := []*cfndiff.StackDiff{cfndiff.DiffTemplates("Net", template(t, `"Q": {"Type": "AWS::SQS::Queue"}`),
		template(t, `"Q": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 5}}`), cfndiff.Options{})}
	var states []review.Gate
	for _, name := range review.AllGates {
		for s := 0; s < 8; s++ {
			g := review.Gate{Name: name, Triggered: s&1 != 0, Enforced: s&2 != 0, Overridden: s&4 != 0 && review.Approvable(name),
				Items: []string{"x"}}
			states = append(states, g)
		}
	}
	for _, stacks := range [][]*cfndiff.StackDiff{nil, changed} {
		for _, a := range states {
			for _, b := range states {
				rep := &review.Report{Key: "k", Stacks: stacks, Gates: []review.Gate{a, b}}
				v := ReviewVerdict(rep)
				blocking := v == NeedsApproval || v == Blocked
				unapprovable := a.Failing() && !review.Approvable(a.Name) || b.Failing() && !review.Approvable(b.Name)
				if blocking != rep.Failed() || unapprovable && v != Blocked || strings.HasPrefix(ReviewHeadline(rep), "✅") == rep.Failed() {
					t.Fatalf("gates %+v %+v: verdict %v, failed %v, headline %q", a, b, v, rep.Failed(), ReviewHeadline(rep))
				}
			}
		}
	}
}

// A fork's report is data its author wrote: one that says a gate no approval lifts was approved
// (overridden) and that the review did not fail is not re-rendered as approved.
func TestForkReportCannotApproveWhatNoApprovalLifts(t *testing.T) {
	t.Parallel()
	for _, gate := range []string{review.GateIncomplete, review.GateExportInUse, review.GateReplaceNamed} {
		raw := `{"gates":[{"name":"` + gate + `","triggered":true,"enforced":true,"overridden":true,"items":["Api"]}],
			"failed":false,"diff":{"stacks":[],"summary":{"update":1,"stacksChanged":1}}}`
		var md bytes.Buffer
		if err := ForkReviewMarkdown(&md, []byte(raw), "k", "0123456789abcdef0123456789abcdef01234567", 0); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(md.String(), "✅") || !strings.Contains(md.String(), "### ❌ blocked") {
			t.Errorf("%s: the fork's report approves what no approval lifts:\n%s", gate, md.String())
		}
	}
}

// Links are built only from a hexadecimal SHA and an https URL without anything that could end a
// Markdown link or hide in it: no javascript: link, no forged link text, no invisible character.
func TestProvenanceRefusesHostileLinks(t *testing.T) {
	t.Parallel()
	sha := "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name string
		rep  review.Report
		l    Links
	}{
		{"javascript repository", review.Report{HeadSHA: sha}, Links{Repository: "javascript:alert(1)//https://github.com/a/b"}},
		{"SHA with a link", review.Report{HeadSHA: sha + ")[x](javascript:alert(1)"}, Links{Repository: "https://github.com/a/b"}},
		{"SHA with a new line", review.Report{BaseSHA: sha + "\n[x](https://evil.test)"}, Links{Repository: "https://github.com/a/b"}},
		{"upper-case hex and too long", review.Report{HeadSHA: strings.ToUpper(sha), MergeSHA: sha + sha + "0"},
			Links{Repository: "https://github.com/a/b"}},
		{"run URL with a title", review.Report{HeadSHA: sha}, Links{Run: `https://github.com/a/b/actions/runs/1 "x"`}},
		{"run URL closing the link", review.Report{HeadSHA: sha}, Links{Run: "https://github.com/a/b/actions/runs/1)[x](javascript:alert(1)"}},
		{"run URL with invisible characters", review.Report{HeadSHA: sha}, Links{Run: "https://github.com/a/b/actions/runs/1\u202e\u200b"}},
		{"run URL with a control character", review.Report{HeadSHA: sha}, Links{Run: "https://github.com/a/b/actions/runs/1\x1b]8;;x\x07"}},
		{"repository with invisible characters", review.Report{HeadSHA: sha}, Links{Repository: "https://github.com/a/b\u200b"}},
	} {
		got := strings.TrimSuffix(provenance(&tc.rep, tc.l), "\n\n")
		if strings.Contains(got, "javascript:") && strings.Contains(got, "](javascript") || strings.Count(got, "](") > 3 ||
			strings.ContainsFunc(got, unsafeRune) || strings.Contains(got, "\n[") {
			t.Errorf("%s: %q", tc.name, got)
		}
		for _, l := range []string{"](javascript", "](https://evil", `"x")`} {
			if strings.Contains(got, l) {
				t.Errorf("%s: %q links %s", tc.name, got, l)
			}
		}
	}
}
