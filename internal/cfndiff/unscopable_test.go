package cfndiff

import (
	"regexp"
	"strings"
	"testing"
)

func TestUnscopableTableLoads(t *testing.T) {
	t.Parallel()
	rows, err := parseUnscopable(unscopableTSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || len(unscopableActions()) != len(rows) {
		t.Fatalf("%d rows, %d distinct actions: want a non-empty table without duplicates",
			len(rows), len(unscopableActions()))
	}
	if !allUnscopable([]string{"ecr:GetAuthorizationToken"}) || !allUnscopable([]string{"ECR:getauthorizationtoken"}) {
		t.Error("ecr:GetAuthorizationToken is not in the table (or is matched case-sensitively)")
	}
	for _, r := range rows {
		if !strings.HasPrefix(r.Source, "https://docs.aws.amazon.com/service-authorization/") {
			t.Errorf("%s: source %q is not a Service Authorization Reference page", r.Action, r.Source)
		}
	}
	if _, err := parseUnscopable("ecr:GetAuthorizationToken only-two-fields\n"); err == nil {
		t.Error("a malformed line was accepted")
	}
}

// An entry must name one action exactly: a wildcard would let the table unblock actions that can be scoped.
func TestUnscopableActionsAreServiceColonAction(t *testing.T) {
	t.Parallel()
	rows, err := parseUnscopable(unscopableTSV)
	if err != nil {
		t.Fatal(err)
	}
	valid := regexp.MustCompile(`^[a-z0-9-]+:[A-Z][A-Za-z0-9]+$`)
	for _, r := range rows {
		if !valid.MatchString(r.Action) {
			t.Errorf("%q is not service:Action", r.Action)
		}
	}
}

func TestUnscopableGrantsRateLow(t *testing.T) {
	t.Parallel()
	allow := func(resource string, actions ...string) Security {
		return Security{StatementsAdded: []Statement{{Effect: "Allow",
			Actions: Targets{Values: actions}, Resources: Targets{Values: []string{resource}}}}}
	}
	for _, c := range []struct {
		name string
		sec  Security
		want string
		sev  Severity
	}{
		{"ECS execution role token", allow("*", "ecr:GetAuthorizationToken"),
			"grants ecr:GetAuthorizationToken on every resource (*): " + unscopableReason, Low},
		{"X-Ray tracing", allow("*", "xray:PutTelemetryRecords", "xray:PutTraceSegments"),
			"grants xray:PutTelemetryRecords, xray:PutTraceSegments on every resource (*): " + unscopableReason, Low},
		{"service-wide stays high", allow("*", "ecr:*"), "grants ecr:* on *", High},
		{"every action stays critical", allow("*", "*"), "grants every action on every resource (* on *)", Critical},
		{"mixed with a scopable action", allow("*", "ecr:GetAuthorizationToken", "s3:PutObject"),
			"grants ecr:GetAuthorizationToken, s3:PutObject on every resource (*)", High},
		{"a prefix wildcard is not the action", allow("*", "ecr:GetAuthorization*"),
			"grants ecr:GetAuthorization* on every resource (*)", High},
		{"to another account", Security{StatementsAdded: []Statement{{Effect: "Allow",
			Actions: Targets{Values: []string{"ecr:GetAuthorizationToken"}}, Resources: Targets{Values: []string{"*"}},
			Principals: Targets{Values: []string{"AWS:arn:aws:iam::999999999999:root"}}}}},
			"grants ecr:GetAuthorizationToken on every resource (*)", High},
	} {
		f, ok := c.sec.Worst()
		if !ok || f.What != c.want || f.Severity != c.sev {
			t.Errorf("%s: %+v, want %q (%s)", c.name, f, c.want, c.sev)
		}
	}
}
