package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/review"
)

// A given head assembly is said so in every view of the review: the marker, the comment's note,
// the terminal's note; a synthesized one is not.
func TestReviewSaysTheHeadWasGiven(t *testing.T) {
	for _, given := range []bool{true, false} {
		rep := &review.Report{Key: "k", HeadGiven: given}
		var md, text bytes.Buffer
		if err := ReviewMarkdown(&md, rep, 0); err != nil {
			t.Fatal(err)
		}
		if err := ReviewText(&text, rep, DiffOptions{}); err != nil {
			t.Fatal(err)
		}
		m, _ := ParseMarker(md.String())
		if got := m.HeadAssembly == "given"; got != given {
			t.Errorf("given %v: marker %+v", given, m)
		}
		if got := strings.Contains(md.String(), "> [!NOTE]\n> "+headGivenNote+"\n"); got != given {
			t.Errorf("given %v: markdown:\n%s", given, md.String())
		}
		if got := strings.Contains(text.String(), "  note: "+headGivenNote+"\n"); got != given {
			t.Errorf("given %v: text:\n%s", given, text.String())
		}
	}
}
