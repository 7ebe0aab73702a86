package compat

import (
	"fmt"

	"github.com/cdkbot/cdkbot/internal/semver"
)

// Kind is what a change did, named so that its required bump follows from it.
type Kind string

// Change kinds and the bump each requires.
const (
	Removed          Kind = "removed"           // major: a property, definition, branch or pattern is gone
	Renamed          Kind = "renamed"           // major: removed and re-added under another name with the same shape
	TypeChanged      Kind = "type-changed"      // major: a type no longer accepted
	MadeRequired     Kind = "made-required"     // major: an optional property became required
	AddedRequired    Kind = "added-required"    // major: a new required property (new required input)
	EnumNarrowed     Kind = "enum-narrowed"     // major: an allowed value is gone
	Closed           Kind = "closed"            // major: additional properties no longer allowed
	ConstraintAdded  Kind = "constraint-added"  // major: a constraint tightened or added (pattern, bounds, format)
	AddedOptional    Kind = "added-optional"    // minor: a new optional property
	AddedType        Kind = "added-type"        // minor: a new definition
	TypeWidened      Kind = "type-widened"      // minor: more types accepted
	EnumWidened      Kind = "enum-widened"      // minor: more values accepted
	MadeOptional     Kind = "made-optional"     // minor: a required property became optional
	Opened           Kind = "opened"            // minor: additional properties now allowed
	ConstraintLifted Kind = "constraint-lifted" // minor: a constraint removed
	Documentation    Kind = "documentation"     // patch: description, default, title, examples
)

var kindBump = map[Kind]semver.Bump{
	Removed: semver.Major, Renamed: semver.Major, TypeChanged: semver.Major, MadeRequired: semver.Major,
	AddedRequired: semver.Major, EnumNarrowed: semver.Major, Closed: semver.Major, ConstraintAdded: semver.Major,
	AddedOptional: semver.Minor, AddedType: semver.Minor, TypeWidened: semver.Minor, EnumWidened: semver.Minor,
	MadeOptional: semver.Minor, Opened: semver.Minor, ConstraintLifted: semver.Minor,
	Documentation: semver.Patch,
}

// BumpFor is the bump a change of this kind requires.
func (k Kind) BumpFor() semver.Bump { return kindBump[k] }

// Change is one difference between two versions of an API or schema.
type Change struct {
	Path   string      `json:"path"` // JSON pointer into the old schema ("#/definitions/X/properties/y")
	Kind   Kind        `json:"kind"`
	Bump   semver.Bump `json:"-"`
	Detail string      `json:"detail"` // one sentence for a person
}

// RequiredBump is the largest bump any change requires (None without changes).
func RequiredBump(changes []Change) semver.Bump {
	b := semver.None
	for _, c := range changes {
		if c.Bump > b {
			b = c.Bump
		}
	}
	return b
}

// Verdict judges a declared version change against the changes it ships.
type Verdict string

// Verdicts. UnderBumped and NoBump fail; OverBumped is information.
const (
	OK          Verdict = "ok"
	UnderBumped Verdict = "under-bumped"
	OverBumped  Verdict = "over-bumped"
	NoBump      Verdict = "no-bump"
)

// Fails reports whether the verdict should fail a check.
func (v Verdict) Fails() bool { return v == UnderBumped || v == NoBump }

// Judge compares the bump required by the changes with the one declared from old to new.
func Judge(required semver.Bump, old, new semver.Version) (Verdict, error) {
	declared, ok := semver.BumpBetween(old, new)
	if !ok {
		return "", fmt.Errorf("declared version %s is lower than %s", new, old)
	}
	switch {
	case required > semver.None && declared == semver.None:
		return NoBump, nil
	case declared < required:
		return UnderBumped, nil
	case declared > required:
		return OverBumped, nil
	}
	return OK, nil
}
