package render

import (
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// A note on an outcome (an earlier run's leftovers cleaned up) is printed under its line,
// its control characters shown as escapes.
func TestPublishSummaryTextShowsNotes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	s := publishplan.Summary{Outcomes: []publishplan.Outcome{
		{Asset: "abc123", Destination: "111111111111-us-east-1", Target: "s3://b/abc123.zip", State: publishplan.Published, Bytes: 2048,
			Note: "aborted 1 unfinished upload(s) an earlier run left"},
		{Asset: "def456", Destination: "111111111111-us-east-1", Target: "s3://b/def456.zip", State: publishplan.Published,
			Note: "unfinished uploads an earlier run may have left were not aborted: AccessDenied\n::error::forged"},
	}}
	if err := PublishSummaryText(&b, s, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "\n    note: aborted 1 unfinished upload(s) an earlier run left\n") || strings.Contains(out, "\n::error::") ||
		!strings.Contains(out, "    note: unfinished uploads an earlier run may have left were not aborted: AccessDenied") {
		t.Errorf("got:\n%s", out)
	}
}
