// Package stackstate is what runs in AWS, as a review sees it: each stack's deployed templates
// and the resources drift detection found changed outside CloudFormation. The deployed adapter
// reads these values and the review consumes them; defining them here, below both, lets the
// values cross from one to the other as they are, instead of being copied field by field
// between twin types. Values only: reading them from AWS is the deployed adapter's business.
package stackstate

import (
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// Stack is what CloudFormation holds for one stack, read through its lookup role.
type Stack struct {
	Deployed bool        // false: no such stack, or only a change set never executed
	Template *cfn.Object // the template the stack runs, when Deployed
	// Nested are the templates its nested stacks run, by the logical id of their
	// AWS::CloudFormation::Stack resource ("Child/Grandchild" deeper down).
	Nested map[string]*cfn.Object
	Err    string // why it could not be read; the review says so and goes on
}

// Drifted is a resource that is no longer what its stack set: changed or deleted outside CloudFormation.
type Drifted struct {
	LogicalID   string               `json:"logicalId"`
	Type        string               `json:"type"`
	Status      string               `json:"status"` // MODIFIED or DELETED
	Differences []PropertyDifference `json:"differences,omitempty"`
}

// PropertyDifference is one property of a drifted resource that is not what the stack set.
type PropertyDifference struct {
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Kind     string `json:"kind"` // ADD, REMOVE, NOT_EQUAL
}

// Summary says in a few words how the resource drifted.
func (d Drifted) Summary() string {
	if d.Status == "DELETED" {
		return "deleted outside CloudFormation"
	}
	var paths []string
	for _, p := range d.Differences {
		paths = append(paths, p.Path)
	}
	if len(paths) == 0 {
		return "changed outside CloudFormation"
	}
	return "changed outside CloudFormation (" + strings.Join(paths, ", ") + ")"
}
