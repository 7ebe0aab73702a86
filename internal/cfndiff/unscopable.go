package cfndiff

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

// unscopableTSV lists the actions that support no resource-level permissions and that the CDK's
// own standard grants put on "*": granting them on every resource is the only way to grant them,
// so a review that rates them like any other grant on "*" blocks every new ECS service.
//
//go:embed unscopable.tsv
var unscopableTSV string

// unscopableReason is shown with a grant rated low because it cannot be scoped.
const unscopableReason = "cannot be scoped: the action supports no resource-level permissions"

// unscopableGrant is one row of the table: an action and where the reference says it has no resource types.
type unscopableGrant struct {
	Action string // "ecr:GetAuthorizationToken"
	Source string // the Service Authorization Reference page
	Why    string // which standard CDK grant puts it on "*"
}

// parseUnscopable reads the table: tab-separated action, source, why; "#" starts a comment.
func parseUnscopable(data string) ([]unscopableGrant, error) {
	var out []unscopableGrant
	for i, line := range strings.Split(data, "\n") {
		if line = strings.TrimRight(line, "\r"); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("unscopable.tsv line %d: want action, source and why separated by tabs", i+1)
		}
		out = append(out, unscopableGrant{Action: f[0], Source: f[1], Why: f[2]})
	}
	return out, nil
}

// unscopableActions indexes the embedded table by lower-cased action (IAM matches actions
// case-insensitively). The package tests validate the data; a bad table scopes nothing.
var unscopableActions = sync.OnceValue(func() map[string]bool {
	rows, err := parseUnscopable(unscopableTSV)
	if err != nil {
		return nil
	}
	m := make(map[string]bool, len(rows))
	for _, r := range rows {
		m[strings.ToLower(r.Action)] = true
	}
	return m
})

// allUnscopable is true when every action is in the table (and there is at least one).
func allUnscopable(actions []string) bool {
	known := unscopableActions()
	for _, a := range actions {
		if !known[strings.ToLower(a)] {
			return false
		}
	}
	return len(actions) > 0
}
