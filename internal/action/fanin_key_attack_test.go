package action

import "testing"

// The merge deploy takes a marker whose key starts with deploy/ for its own deploy comment and
// skips it when it looks for the pull request's reviews (merge.go). A review keyed deploy/… (a
// key input built from a matrix value) would be invisible to the deploy, which would then take
// the pull request as unreviewed (on-unreviewed: warn deploys it), and would edit the deploy
// comment of that key as its own. A key input the deploy reads as its own is refused.
func TestCommentKeyCannotTakeTheDeploysKeys(t *testing.T) {
	for _, key := range []string{"deploy/cdk/review/.", "deploy/x"} {
		if k, err := CommentKey(key, "cdk/review/."); err == nil {
			t.Errorf("key input %q taken as %q", key, k)
		}
	}
}
