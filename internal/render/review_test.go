package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/review"
)

// A stack id comes from the PR's code: it must not be able to end the hidden marker early.
func TestMarkerCannotBeClosedByHostileIDs(t *testing.T) {
	r := &review.Report{Key: "ci/deploy --> <b>x</b>", TemplateHash: map[string]string{"evil-->stack": "00"}}
	m := MarkerComment(r)
	if strings.Count(m, "-->") != 1 || !strings.HasSuffix(m, " -->") {
		t.Fatalf("marker can be closed early: %s", m)
	}
	var back Marker
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(m, MarkerPrefix), " -->")), &back); err != nil {
		t.Fatal(err)
	}
	if back.Key != r.Key || back.Templates["evil-->stack"] != "00" {
		t.Errorf("marker does not round-trip: %+v", back)
	}
}

func TestReviewMarkdownFitsTheBudget(t *testing.T) {
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
	if !strings.Contains(out, "Bucket2 \\(AWS::S3::Bucket\\) in Data and 9 more (all 12 in the table below)") || strings.Contains(out, "Bucket3 \\(AWS::S3::Bucket\\) in Data;") ||
		!strings.Contains(out, "<summary>Every gate item (12)</summary>") || strings.Count(out, "| <code>destroy</code> |") != 12 {
		t.Errorf("collapse:\n%s", out)
	}
}
