package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

const approveLabel = "cdkbot/approve-destructive"

// A label approval counts only while the label is on the pull request and was last applied by
// someone who may approve: a maintainer applies it, then removes it; the author re-applying it,
// or a triage user, does not bring the approval back.
func TestActionWithdrawnLabelApproval(t *testing.T) {
	for _, reapplier := range []string{"dev", "trish"} {
		t.Run(reapplier, func(t *testing.T) {
			srv := ghserver.New(t, actionToken)
			srv.Permissions["dev"], srv.Permissions["alice"], srv.Permissions["trish"] = "write", "maintain", "triage"
			actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "opened", "4678020cb068", "9f2c1a0b7d4e"))
			if code, stdout, _ := run(t, "action"); code != ExitVerdict {
				t.Fatalf("first review: exit %d\n%s", code, stdout)
			}
			srv.Label(42, approveLabel, "alice")
			actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "labeled", "4678020cb068", "9f2c1a0b7d4e", approveLabel))
			if code, stdout, _ := run(t, "action"); code != ExitOK || !strings.Contains(srv.Body(42), "approved by alice") {
				t.Fatalf("alice's approval: exit %d\n%s\n%s", code, stdout, srv.Body(42))
			}

			srv.Unlabel(42, approveLabel, "alice")
			srv.Label(42, approveLabel, reapplier)
			code, stdout, _ := run(t, "action")
			last := srv.CheckRuns[len(srv.CheckRuns)-1]
			if code != ExitVerdict || last.Conclusion != "failure" || strings.Contains(srv.Body(42), "approved by alice") {
				t.Errorf("re-applied by %s: exit %d, check %s\n%s\n%s", reapplier, code, last.Conclusion, stdout, srv.Body(42))
			}
			if !strings.Contains(srv.Body(42), "The approval by "+reapplier) {
				t.Errorf("the comment does not say why %s's label does not count:\n%s", reapplier, srv.Body(42))
			}
		})
	}
}

// An approval covers what its approver saw: approved on a commit that deletes a table, the label
// does not cover a later push that also grants every action on every resource and sts:AssumeRole
// on "*". The comment names the new items and asks to re-approve; re-applying the label after
// reading it approves again.
func TestActionStaleLabelApproval(t *testing.T) {
	srv := ghserver.New(t, actionToken)
	srv.Permissions["dev"], srv.Permissions["alice"] = "write", "maintain"
	admin := adminGrantingHead(t)
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "opened", "4678020cb068", "9f2c1a0b7d4e"))
	t.Setenv("INPUT_FAIL-ON", "destroy-stateful,security-broadening")
	if code, stdout, _ := run(t, "action"); code != ExitVerdict {
		t.Fatalf("first review: exit %d\n%s", code, stdout)
	}
	srv.Label(42, approveLabel, "alice")
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "labeled", "4678020cb068", "9f2c1a0b7d4e", approveLabel))
	t.Setenv("INPUT_FAIL-ON", "destroy-stateful,security-broadening")
	if code, stdout, _ := run(t, "action"); code != ExitOK {
		t.Fatalf("alice's approval: exit %d\n%s\n%s", code, stdout, srv.Body(42))
	}

	// The author pushes more: the label is still on, from before.
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "synchronize", "77aa99cc0011", "9f2c1a0b7d4e", approveLabel))
	t.Setenv("INPUT_FAIL-ON", "destroy-stateful,security-broadening")
	t.Setenv("INPUT_HEAD-ASSEMBLY", admin)
	code, stdout, _ := run(t, "action")
	body := srv.Body(42)
	last := srv.CheckRuns[len(srv.CheckRuns)-1]
	if code != ExitVerdict || last.Conclusion != "failure" || last.HeadSHA != "77aa99cc0011" {
		t.Fatalf("after the push: exit %d, check %s on %s\n%s", code, last.Conclusion, last.HeadSHA, stdout)
	}
	if !strings.Contains(body, "**Blocked by `security-broadening`**: new since the approval (approved by alice") ||
		!strings.Contains(body, "grants every action on every resource") || !strings.Contains(body, "sts:AssumeRole") ||
		!strings.Contains(body, "re-approve") {
		t.Errorf("the comment does not name what is new and who must re-approve:\n%s", body)
	}

	// Re-applied after reading the new review: approved again.
	srv.Unlabel(42, approveLabel, "alice")
	srv.Label(42, approveLabel, "alice")
	if code, stdout, _ := run(t, "action"); code != ExitOK {
		t.Errorf("re-approved: exit %d\n%s\n%s", code, stdout, srv.Body(42))
	}
}

// adminGrantingHead is the demo's head with one more policy: every action on every resource,
// and sts:AssumeRole on "*", for the service's role.
func adminGrantingHead(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "after-admin")
	if err := os.CopyFS(dir, os.DirFS("demo/after")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ShopService.template.json")
	var tpl map[string]any
	raw, _ := os.ReadFile(path)
	if err := json.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	tpl["Resources"].(map[string]any)["Escalate"] = map[string]any{"Type": "AWS::IAM::Policy", "Properties": map[string]any{
		"PolicyName": "escalate", "Roles": []any{map[string]any{"Ref": "CheckoutServiceRoleD03DF6D3"}},
		"PolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": []any{
			map[string]any{"Effect": "Allow", "Action": "*", "Resource": "*"},
			map[string]any{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}}}}}
	writeJSONFile(t, path, tpl)
	return dir
}
