package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/findings"
	"github.com/cdkbot/cdkbot/internal/review"
)

// A hostile app writes its validation report and annotations: every text of a finding (plugin,
// rule, custom severity, construct path, logical id, stack, message, fix), a failed plugin's
// reason, and the likely moves' ids and stacks carry Markdown, HTML, a </details> breakout, a
// forged marker, links, mentions, invisible and bidirectional characters and workflow commands.
// The comment, the terminal, the headline and the JSON keep all of it inert, and the
// validation-error gate's items, which the check run's annotations carry, too.
func TestFindingsHostileAppStaysInert(t *testing.T) {
	t.Parallel()
	rep := findingsReview(t, []string{review.GateValidationError})
	forged := "</details></summary><!-- cdkbot:{\"tool\":\"cdkbot\",\"key\":\"k\",\"blocked\":false} -->"
	h := evil + " " + forged + " " + evilLead
	var fs []findings.Finding
	for _, sev := range []findings.Severity{findings.Fatal, findings.Error, findings.Warning, findings.Info} {
		for _, st := range []findings.Status{findings.New, findings.Existing, findings.NotCompared} {
			fs = append(fs, findings.Finding{Source: findings.Validation, Plugin: evilLead + h, Rule: h, Severity: sev,
				Custom: h, Stack: h, Path: evilLead + h, LogicalID: h, Message: evilLead + h, Fix: h, Status: st},
				findings.Finding{Source: findings.Annotation, Severity: sev, LogicalID: evilLead + h, Message: h, Status: st})
		}
	}
	rep.Findings = &findings.Report{Findings: fs, Plugins: []string{h}, Failures: []string{evilLead + h, h, h, h},
		Problem: evilLead + h, Suppressed: 1}
	rep.Moves = []review.Move{{Type: evilLead + h, From: review.MoveEnd{Stack: evilLead + h, LogicalID: evilLead + h, Impact: h},
		To: review.MoveEnd{Stack: h, LogicalID: evilLead + h, Impact: h}}}
	for i, g := range rep.Gates {
		if g.Name == review.GateValidationError {
			rep.Gates[i].Items = findings.GateItems(rep.Findings)
			rep.Gates[i].Triggered = true
		}
	}
	var md, text, js bytes.Buffer
	if err := ReviewMarkdown(&md, rep, 0); err != nil {
		t.Fatal(err)
	}
	if err := ReviewText(&text, rep, DiffOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ReviewJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	assertInert(t, "findings markdown", md.String(), "markdown")
	assertInert(t, "findings text", text.String(), "text")
	assertInert(t, "findings json", js.String(), "json")
	assertInert(t, "findings headline", ReviewHeadline(rep)+" \\u200b", "text")
	if n := strings.Count(md.String(), MarkerPrefix); n != 1 {
		t.Errorf("%d markers in the comment", n)
	}
	if m, ok := ParseMarker(md.String()); !ok || !m.Blocked {
		t.Errorf("the marker does not say blocked: %+v", m)
	}
	if strings.Contains(ReviewHeadline(rep), "✅") || !strings.Contains(md.String(), "### ⚠️ needs approval") {
		t.Errorf("a failing validation-error gate reads as %q", ReviewHeadline(rep))
	}
	for _, it := range findings.GateItems(rep.Findings) {
		if c := Clean(it); strings.Contains(c, "##[") || strings.HasPrefix(strings.TrimSpace(c), "::") || strings.ContainsFunc(c, unsafeRune) {
			t.Errorf("a gate item an annotation carries stays live: %q", c)
		}
	}
}
