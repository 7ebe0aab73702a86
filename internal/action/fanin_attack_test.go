package action

import (
	"encoding/json"
	"testing"

	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

// Reports a leg could leave that must not pass it: a marker that says blocked beside a report
// that says it did not fail, a marker of another key than its report's, a marker of another tool,
// and two reports for one leg, one of them stale.
func TestFanInForgedReportsFailClosed(t *testing.T) {
	t.Parallel()
	raw := func(key, markerKey, tool string, blocked bool) pipeline.LegFile {
		m, _ := json.Marshal(render.Marker{Tool: tool, Key: markerKey, HeadSHA: "h", Blocked: blocked})
		b, _ := json.Marshal(SavedReport{PullRequest: 7, Key: key, Review: json.RawMessage(passedReview),
			Comment: render.MarkerPrefix + string(m) + " -->\n### cdkbot review"})
		return pipeline.LegFile{Path: key + "/cdkbot-report.json", Raw: b}
	}
	ok := legFile(t, "ok/cdkbot-report.json", 7, "cdk/review/a/prod", "h", false, passedReview)
	for name, forged := range map[string]pipeline.LegFile{
		"blocked marker":      raw("cdk/review/a/dev", "cdk/review/a/dev", "cdkbot", true),
		"another key":         raw("cdk/review/a/dev", "cdk/review/a/prod", "cdkbot", false),
		"another tool":        raw("cdk/review/a/dev", "cdk/review/a/dev", "other", false),
		"stale and duplicate": legFile(t, "old/cdkbot-report.json", 7, "cdk/review/a/prod", "old", false, passedReview),
	} {
		files := []pipeline.LegFile{ok, forged}
		if name == "stale and duplicate" {
			files = append(files, legFile(t, "dev/cdkbot-report.json", 7, "cdk/review/a/dev", "h", false, passedReview))
		}
		c := CombineReports(FanInRequest{PR: 7, HeadSHA: "h", Plan: fanInPlan(), Files: files})
		if !c.Failed() {
			t.Errorf("%s: the fan-in passes: %+v", name, c.Sections)
		}
	}
}

// A fan-in that does not know the head commit cannot tell a stale report from a fresh one: it
// must not take reports whose markers name no commit as being of the head.
func TestFanInWithoutAHeadFailsClosed(t *testing.T) {
	t.Parallel()
	files := []pipeline.LegFile{
		legFile(t, "1/cdkbot-report.json", 7, "cdk/review/a/dev", "", false, passedReview),
		legFile(t, "2/cdkbot-report.json", 7, "cdk/review/a/prod", "", false, passedReview),
	}
	if c := CombineReports(FanInRequest{PR: 7, HeadSHA: "", Plan: fanInPlan(), Files: files}); !c.Failed() {
		t.Errorf("the fan-in passes reports of no commit: %+v", c.Sections)
	}
}
