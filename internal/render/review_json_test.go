package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/cdkbot/cdkbot/internal/review"
)

// ReviewJSON writes the diff in place stack by stack instead of embedding a whole document:
// the bytes must be those of the review encoded whole, diff included, hostile strings and all.
func TestReviewJSONIsTheWholeDocument(t *testing.T) {
	t.Parallel()
	demo, err := review.Run(review.Input{Base: loadAssembly(t, "../cli/demo/before"), Head: loadAssembly(t, "../cli/demo/after"),
		ToolSchemaMax: 55})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*review.Report{"demo": demo, "hostile": hostileReport(t), "empty": {}} {
		var diff, want, got bytes.Buffer
		if err := DiffJSON(&diff, DiffReport{Stacks: r.Stacks}); err != nil {
			t.Fatal(err)
		}
		whole := struct {
			*review.Report
			Failed bool            `json:"failed"`
			Diff   json.RawMessage `json:"diff"`
		}{r, r.Failed(), json.RawMessage(bytes.TrimSpace(diff.Bytes()))}
		if err := encodeJSON(&want, whole, "", false); err != nil {
			t.Fatal(err)
		}
		if err := ReviewJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: ReviewJSON differs from the whole document:\n got %.300s\nwant %.300s", name, got.String(), want.String())
		}
	}
}
