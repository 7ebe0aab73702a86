package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/review"
)

// A pull request destroys a table and creates one with the same properties under another id, so
// the review names a likely move. The hint is a hint: the diff's row still says destroy, the
// headline still counts the destroy, the tip says that deployed as is the old one is deleted, and
// the failing destroy-stateful gate keeps the verdict off ✅ in the comment, the check run's
// title and the terminal.
func TestLikelyMoveNeverSoftensADestroy(t *testing.T) {
	t.Parallel()
	table := func(id string) string {
		return `"` + id + `": {"Type": "AWS::DynamoDB::Table", "DeletionPolicy": "Delete", "Properties": {"KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
			"AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}}`
	}
	d := cfndiff.DiffTemplates("Data", template(t, table("Orders")), template(t, table("OrdersV2")), cfndiff.Options{})
	moves := review.Moves([]*cfndiff.StackDiff{d})
	if len(moves) != 1 || moves[0].From.Impact != "destroy" {
		t.Fatalf("moves %+v", moves)
	}
	rep := &review.Report{Key: "k", Stacks: []*cfndiff.StackDiff{d}, Moves: moves, OverrideLabel: "cdkbot/approve-destructive",
		Gates: []review.Gate{{Name: review.GateDestroyStateful, Triggered: true, Enforced: true, Items: []string{"Orders in Data"}}}}
	var md, text bytes.Buffer
	if err := ReviewMarkdown(&md, rep, 0); err != nil {
		t.Fatal(err)
	}
	if err := ReviewText(&text, rep, DiffOptions{}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{"### ⚠️ needs approval", `1 destroy \(Orders in Data\)`, "**destroy**: the resource and its data are deleted · likely moved to OrdersV2",
		"deletes or orphans the old one", "Blocked by `destroy-stateful`"} {
		if !strings.Contains(out, want) {
			t.Errorf("the comment lacks %q:\n%s", want, out)
		}
	}
	if h := ReviewHeadline(rep); !strings.HasPrefix(h, "⚠️ needs approval") || !strings.Contains(h, "1 destroy") {
		t.Errorf("check run title %q", h)
	}
	if !strings.HasPrefix(text.String(), "cdkbot review: needs approval") || !strings.Contains(text.String(), "[-] destroy") {
		t.Errorf("terminal:\n%s", text.String())
	}
}
