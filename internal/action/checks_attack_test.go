package action

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/review"
)

// A hostile app reports thousands of validation errors (and destroys as many resources): the
// check run's annotations, sent 50 a request, are bounded like the fan-in's, so the app cannot
// make one check run thousands of GitHub requests. The last one says that there are more and
// where they are, and every one is cleaned.
func TestAnnotationsAreBounded(t *testing.T) {
	t.Parallel()
	var items []string
	for i := range 5000 {
		items = append(items, fmt.Sprintf("plugin R%d on X%d: ::error::boom \u202e", i, i))
	}
	rep := &review.Report{Key: "k", Gates: []review.Gate{
		{Name: review.GateValidationError, Triggered: true, Enforced: true, Items: items},
		{Name: review.GateDestroy, Triggered: true, Enforced: true, Items: items},
	}}
	got := annotations(Gate{}, rep)
	if len(got) > maxFanInAnnotations {
		t.Fatalf("%d annotations", len(got))
	}
	if last := got[len(got)-1]; !strings.Contains(last.Message, "more") {
		t.Errorf("the last annotation does not say there are more: %+v", last)
	}
	for _, a := range got {
		if strings.ContainsRune(a.Message, '\u202e') {
			t.Fatalf("uncleaned: %q", a.Message)
		}
	}
}
