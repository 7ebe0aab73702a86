package action

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/render"
)

// comment: changes deletes only this review's own comments: cdkbot's sticky comment of this key
// and the deploy identities it kept apart under this key. Comments cdkbot's identity wrote for
// another key (another workflow, the fan-in's combined comment whose key starts this one's,
// another key's identity parts), a comment that quotes a marker instead of starting with one, a
// marker with another tool, and anyone else's comment with a forged marker all stay, on
// whichever page of the pull request's comments they are.
func TestCommentChangesDeletesOnlyItsOwn(t *testing.T) {
	base := manyStacks(t, 3, -1)
	srv := postingServer(t)
	const own = "cdk-deployer[bot]"
	marker := func(key string) string { return render.MarkerPrefix + `{"tool":"cdkbot","key":"` + key + `"} -->` }
	part := func(key string) string {
		return render.IdentityPrefix + `{"tool":"cdkbot","key":"` + key + `","digest":"d","part":1,"parts":1,"stacks":{}} -->`
	}
	keep := []string{
		marker("cdk/review") + " the fan-in's combined comment",
		marker("cdk/review/./other") + " a longer key",
		marker("other-workflow/review/.") + " another workflow",
		marker("CDK/REVIEW/.") + " another key in other letters",
		"> " + marker("cdk/review/.") + " quoted",
		"\n" + marker("cdk/review/.") + " not at the start",
		render.MarkerPrefix + `{"tool":"other","key":"cdk/review/."} --> another tool`,
		part("other-workflow/review/."),
		"a plain comment of cdkbot's identity",
	}
	for i := range 120 { // more than a page: the ones to delete are past it
		srv.Add(7, "dev", fmt.Sprintf("comment %d", i))
	}
	for _, b := range keep {
		srv.Add(7, own, b)
	}
	srv.Add(7, "dev", marker("cdk/review/.")+" forged by the author")
	srv.Add(7, "github-actions[bot]", part("cdk/review/.")+" another bot's")
	srv.Add(7, own, marker("cdk/review/.")+" the review of an earlier run")
	srv.Add(7, own, part("cdk/review/."))
	before := len(srv.Comments[7])
	r, err := postingRun(t, srv, base, base, "changes", "")
	if err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if got := len(srv.Comments[7]); got != before-2 {
		t.Errorf("%d comments deleted, want 2", before-got)
	}
	var left []string
	for _, c := range srv.Comments[7] {
		left = append(left, c.Body)
		if c.User == own && (strings.HasSuffix(c.Body, "earlier run") || strings.HasPrefix(c.Body, part("cdk/review/."))) {
			t.Errorf("this review's own comment stays: %q", c.Body)
		}
	}
	for _, b := range append(keep, marker("cdk/review/.")+" forged by the author", part("cdk/review/.")+" another bot's") {
		if !slices.Contains(left, b) {
			t.Errorf("deleted: %q", b)
		}
	}
}
