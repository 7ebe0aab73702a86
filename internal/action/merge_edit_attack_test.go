package action

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

// reviewBody is the review comment of key "cdk/review/." cdkbot writes for pull request #7 at h7
// recording ids, blocked or not.
func reviewBody(ids map[string]review.Identity, blocked bool) string {
	mk, _ := json.Marshal(render.Marker{Tool: "cdkbot", Key: "cdk/review/.", HeadSHA: "h7",
		Stacks: review.IdentityStrings(ids), Blocked: blocked})
	return render.MarkerPrefix + string(mk) + " -->\n### cdkbot review"
}

// postReview writes (or, as cdkbot, edits) cdkbot's review comment of #7.
func (f *fanOutAttack) postReview(blocked bool) {
	f.t.Helper()
	if _, err := f.gh.UpsertComment(context.Background(), 7, reviewBody(f.ids, blocked), func(b string) bool {
		key, ok := render.MarkerKey(b)
		return ok && key == "cdk/review/."
	}); err != nil {
		f.t.Fatal(err)
	}
}

// A single review (no fan-out) that blocked, edited by a collaborator into one that passed: GitHub
// still shows cdkbot as its author, but GraphQL names the editor, and the deploy refuses.
func TestMergeDeployRefusesAReviewAUserEdited(t *testing.T) {
	f := newFanOutAttack(t)
	f.postReview(true)
	f.srv.Edit(f.srv.Comments[7][0], "maintainer", reviewBody(f.ids, false))
	if f.srv.Comments[7][0].User != "github-actions[bot]" {
		t.Fatalf("the edit changed the author: %s", f.srv.Comments[7][0].User)
	}
	if deployed, _ := f.deploy("cdk/review/."); deployed || !f.r.has("#7's cdkbot review was edited by @maintainer: "+
		"review it again (/cdkbot review) before deploying") {
		t.Errorf("a review a collaborator edited deployed\n%s", f.r)
	}
}

// cdkbot edits its own sticky comment on every review: after a user's edit, a review again (cdkbot
// the last editor) is cdkbot's word once more, and deploys what it recorded.
func TestMergeDeployFollowsCdkbotsOwnEdit(t *testing.T) {
	f := newFanOutAttack(t)
	f.postReview(true)
	f.srv.Edit(f.srv.Comments[7][0], "maintainer", reviewBody(f.ids, false)+"\n\nfixed by hand")
	f.postReview(false) // /cdkbot review: cdkbot edits its comment as itself
	if len(f.srv.Comments[7]) != 1 || f.srv.Comments[7][0].Editor != "github-actions" {
		t.Fatalf("cdkbot's review again did not edit its comment as itself: %+v", *f.srv.Comments[7][0])
	}
	if deployed, _ := f.deploy("cdk/review/."); !deployed {
		t.Errorf("cdkbot's own edit of its review refused\n%s", f.r)
	}
}

// When who last edited cdkbot's review cannot be read, nothing says the review is cdkbot's word:
// the deploy refuses with the error (fail closed), never deploys on the REST body alone.
func TestMergeDeployRefusesWhenTheEditorCannotBeRead(t *testing.T) {
	f := newFanOutAttack(t)
	f.postReview(false)
	if _, err := f.gh.Login(context.Background()); err != nil { // who cdkbot is, known: the editors are not
		t.Fatal(err)
	}
	f.srv.Fail["POST /graphql"] = []ghserver.Response{{Status: 403,
		Body: `{"message":"Resource not accessible by integration"}`}}
	if deployed, _ := f.deploy("cdk/review/."); deployed || !f.r.has("who last edited the comments of #7") {
		t.Errorf("the deploy went ahead without knowing who last edited the review\n%s", f.r)
	}
}
