package render

import (
	"bytes"
	"encoding/json"
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
