// Package cfndiff compares two CloudFormation templates and says, per resource, what
// CloudFormation will do: create, update, replace (or may replace), destroy, orphan, or import.
// Replacement is propagated through every reference (Ref, Fn::GetAtt, Fn::Sub, and references
// nested in other intrinsics) to a fixed point, and IAM and security-group changes are extracted
// so reviewers see when permissions broaden.
//
// It is pure: templates in, a TemplateDiff out. Every change is kept with its impact and cause
// (annotate, don't drop); renderers and gates decide what to show and what blocks.
package cfndiff

// Impact is what CloudFormation will do to a resource or because of a property change.
type Impact uint8

// Impacts, from harmless to destructive. Their order is the reference's "badness" order, used
// to take the worst impact of a resource's property changes.
const (
	NoChange Impact = iota
	Import
	Update
	Create
	Orphan
	MayReplace
	Replace
	Destroy
)

var impactNames = [...]string{"no-change", "import", "update", "create", "orphan", "may-replace", "replace", "destroy"}

func (i Impact) String() string { return impactNames[i] }

// Symbol is a one-character marker for tables and terminals.
func (i Impact) Symbol() string {
	return [...]string{"=", "<", "~", "+", "⊘", "?", "±", "-"}[i]
}

// badness orders impacts; Import counts as nothing, like NoChange.
func (i Impact) badness() int {
	return [...]int{0, 0, 1, 2, 3, 4, 5, 6}[i]
}

// worse returns the worse of two impacts (the first on a tie).
func worse(a, b Impact) Impact {
	if b.badness() > a.badness() {
		return b
	}
	return a
}

// IsReplacement is true for Replace and MayReplace.
func (i Impact) IsReplacement() bool { return i == Replace || i == MayReplace }
