package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/review"
)

// A stack id comes from the PR's code: it must not be able to end the hidden marker early.
func TestMarkerCannotBeClosedByHostileIDs(t *testing.T) {
	t.Parallel()
	r := &review.Report{Key: "ci/deploy --> <b>x</b>",
		Identity: map[string]review.Identity{"evil-->stack": {Digest: strings.Repeat("0", 32)}}}
	m := MarkerComment(r)
	if strings.Count(m, "-->") != 1 || !strings.HasSuffix(m, " -->") {
		t.Fatalf("marker can be closed early: %s", m)
	}
	var back Marker
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(m, MarkerPrefix), " -->")), &back); err != nil {
		t.Fatal(err)
	}
	if back.Key != r.Key || !strings.HasPrefix(back.Stacks["evil-->stack"], strings.Repeat("0", 32)) {
		t.Errorf("marker does not round-trip: %+v", back)
	}
}

func TestReviewMarkdownFitsTheBudget(t *testing.T) {
	t.Parallel()
	r := DiffReport{Stacks: assemblyReport(t, "../cli/demo/before", "../cli/demo/after").Stacks}
	rep := &review.Report{Key: "k", Stacks: r.Stacks, TemplateHash: map[string]string{}}
	for _, budget := range []int{GitHubCommentLimit, 6000, 3000} {
		var out bytes.Buffer
		if err := ReviewMarkdown(&out, rep, budget); err != nil {
			t.Fatal(err)
		}
		if out.Len() > budget {
			t.Errorf("budget %d: %d bytes", budget, out.Len())
		}
		if !strings.HasPrefix(out.String(), MarkerPrefix) {
			t.Errorf("budget %d: marker missing", budget)
		}
		assertBalanced(t, out.String())
	}
}

// A gate with many items names three on its line; every item is in one table.
func TestLongGateListsCollapse(t *testing.T) {
	t.Parallel()
	var items []string
	for i := range 12 {
		items = append(items, fmt.Sprintf("Bucket%d (AWS::S3::Bucket) in Data", i))
	}
	rep := &review.Report{Key: "k", OverrideLabel: "ok", Gates: []review.Gate{{Name: "destroy", Triggered: true, Enforced: true, Items: items}}}
	var b strings.Builder
	if err := ReviewMarkdown(&b, rep, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "> - Bucket2 \\(AWS::S3::Bucket\\) in Data\n> - and 9 more (all 12 in the table below)\n") ||
		strings.Contains(out, "> - Bucket3") ||
		!strings.Contains(out, "<summary>Every gate item (12)</summary>") || strings.Count(out, "| <code>destroy</code> |") != 12 {
		t.Errorf("collapse:\n%s", out)
	}
}

// Every section is bounded: 1,000-character logical ids in 300 replaced resources, gate items
// and policy violations still render within the smallest comment budget, so a comment arrives.
func TestHostileReportFitsTheSmallestBudget(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("L", 1000)
	var resources []*cfndiff.ResourceChange
	var items []string
	var violations []aspects.Violation
	for i := range 300 {
		id := fmt.Sprintf("%s%d", long, i)
		resources = append(resources, &cfndiff.ResourceChange{LogicalID: id, OldType: "AWS::S3::Bucket", NewType: "AWS::S3::Bucket", Impact: cfndiff.Replace})
		items = append(items, id+" (AWS::S3::Bucket) in Data")
		violations = append(violations, aspects.Violation{Rule: "retain-stateful", Severity: "error", Stack: "Data", Path: "Data/" + id, Message: long})
	}
	rep := &review.Report{Key: "k", OverrideLabel: "ok", Notes: []string{long + long},
		Stacks: []*cfndiff.StackDiff{{ID: "Data", StackName: "Data", DisplayName: "Data", Status: cfndiff.StackChanged, Diff: &cfndiff.TemplateDiff{Resources: resources}}},
		Gates:  []review.Gate{{Name: "replace", Triggered: true, Enforced: true, Items: items}},
		Policy: &aspects.Report{Violations: violations},
	}
	for _, budget := range []int{8 << 10, 16 << 10, 32 << 10} {
		var b strings.Builder
		if err := ReviewMarkdown(&b, rep, budget); err != nil {
			t.Fatal(err)
		}
		if b.Len() > budget {
			t.Errorf("budget %d: %d bytes", budget, b.Len())
		}
		if !strings.Contains(b.String(), "\n### ⚠️ needs approval · cdkbot review\n") ||
			!strings.Contains(b.String(), "**Blocked by `replace`**") {
			t.Errorf("budget %d: the headline or the verdict is missing", budget)
		}
	}
}
