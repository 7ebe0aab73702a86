package ghspec

import (
	"net/url"
	"strings"
	"testing"
)

// The contract catches what a hand-written fake would let through.
func TestRESTContract(t *testing.T) {
	s := Load(t, DotCom)
	for _, c := range []struct {
		method, path, query, body string
		wantOp, wantErr           string
	}{
		{"POST", "/repos/o/r/issues/7/comments", "", `{"body":"hi"}`, "issues/create-comment", ""},
		{"PATCH", "/repos/o/r/issues/comments/9", "", `{"body":"hi"}`, "issues/update-comment", ""},
		{"GET", "/repos/o/r/issues/7/comments", "per_page=100&page=2", "", "issues/list-comments", ""},
		{"POST", "/repos/o/r/check-runs", "", `{"name":"cdkbot","head_sha":"abc","status":"completed","conclusion":"success"}`, "checks/create", ""},
		{"POST", "/repos/o/r/check-runs", "", `{"name":"cdkbot","head_sha":"abc","conclusion":"passed"}`, "checks/create", "conclusion"},
		{"POST", "/repos/o/r/issues/7/comments", "", `{"text":"hi"}`, "issues/create-comment", "body"},
		{"GET", "/repos/o/r/issues/7/comments", "perpage=100", "", "issues/list-comments", "perpage"},
		{"GET", "/repos/o/r/pulls/7/approvers", "", "", "", "not an operation"},
		{"GET", "/user", "", "", "users/get-authenticated", ""},
	} {
		q, _ := url.ParseQuery(c.query)
		op, err := s.CheckRequest(c.method, c.path, q, []byte(c.body))
		if op != nil && op.ID != c.wantOp {
			t.Errorf("%s %s: operation %s, want %s", c.method, c.path, op.ID, c.wantOp)
		}
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s %s: %v", c.method, c.path, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s %s: error %v, want one naming %q", c.method, c.path, err, c.wantErr)
		}
	}
	op, _ := s.Find("POST", "/repos/o/r/issues/7/comments")
	if err := s.CheckResponse(op, 201, []byte(`{"id":1}`)); err == nil || !strings.Contains(err.Error(), "missing propert") {
		t.Errorf("an incomplete comment must not validate: %v", err)
	}
	if err := s.CheckResponse(op, 200, []byte(`{}`)); err == nil {
		t.Error("an undescribed status must fail")
	}
}

func TestGraphQLContract(t *testing.T) {
	schema := GraphQL(t)
	if _, err := CheckGraphQL(schema, "query { viewer { login } }", nil); err != nil {
		t.Error(err)
	}
	if _, err := CheckGraphQL(schema, "query { viewer { slug } }", nil); err == nil {
		t.Error("an unknown field must fail")
	}
	m := "mutation($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: OUTDATED}) { minimizedComment { isMinimized } } }"
	if _, err := CheckGraphQL(schema, m, map[string]any{"id": "IC_1"}); err != nil {
		t.Error(err)
	}
	if _, err := CheckGraphQL(schema, m, map[string]any{}); err == nil {
		t.Error("a missing required variable must fail")
	}
}

func TestWebhooks(t *testing.T) {
	for _, ev := range []string{"pull_request", "push", "issue_comment", "merge_group"} {
		if len(Webhooks(t, ev)) == 0 {
			t.Errorf("no %s examples", ev)
		}
	}
}
