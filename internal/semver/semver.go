// Package semver is cdkbot's version arithmetic: SemVer 2.0 versions (validation and ordering
// come from golang.org/x/mod/semver, which builds nothing at package init), a version-spec grammar
// with cdkbot's meanings for partial versions, best-match resolution of a wanted version among
// available ones, and the bump between two versions. It is what compatibility checks and
// framework/CLI comparisons are built on.
package semver

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"
)

// Version is a SemVer 2.0 version.
type Version struct {
	text                string // as written, without a leading "v"
	major, minor, patch uint64
}

// Parse reads a full version (MAJOR.MINOR.PATCH with optional -pre and +build; a leading "v" is
// accepted). Partial versions are not versions; they belong in specs.
func Parse(s string) (Version, error) {
	text := strings.TrimPrefix(strings.TrimSpace(s), "v")
	core, _, _ := strings.Cut(text, "+")
	core, _, _ = strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	// x/mod/semver also takes the shorthands v1 and v1.2; a version has all three parts.
	if !semver.IsValid("v"+text) || len(parts) != 3 {
		return Version{}, fmt.Errorf("%q is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])", s)
	}
	v := Version{text: text}
	for i, n := range []*uint64{&v.major, &v.minor, &v.patch} {
		var err error
		if *n, err = strconv.ParseUint(parts[i], 10, 64); err != nil {
			return Version{}, fmt.Errorf("%q is not a semantic version: %s is too large", s, parts[i])
		}
	}
	return v, nil
}

// MustParse is Parse for constants known to be valid.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Major, Minor and Patch are the numeric parts.
func (v Version) Major() uint64 { return v.major }
func (v Version) Minor() uint64 { return v.minor }
func (v Version) Patch() uint64 { return v.patch }

// Prerelease is the pre-release part ("rc.1"), "" for releases.
func (v Version) Prerelease() string { return strings.TrimPrefix(semver.Prerelease("v"+v.text), "-") }

func (v Version) String() string { return v.text }

// Compare orders versions by SemVer precedence (build metadata is ignored): -1, 0 or 1.
func (v Version) Compare(o Version) int { return semver.Compare("v"+v.text, "v"+o.text) }

// Less reports v < o.
func (v Version) Less(o Version) bool { return v.Compare(o) < 0 }

// Bump is the kind of version increase between two versions, or that a change requires.
type Bump uint8

// Bumps, from none to major.
const (
	None Bump = iota
	Patch
	Minor
	Major
)

func (b Bump) String() string { return [...]string{"none", "patch", "minor", "major"}[b] }

// BumpBetween is the bump from old to new: the highest part that grew. A decrease is reported
// as None with ok false.
func BumpBetween(old, new Version) (b Bump, ok bool) {
	switch {
	case new.Major() > old.Major():
		return Major, true
	case new.Major() < old.Major():
		return None, false
	case new.Minor() > old.Minor():
		return Minor, true
	case new.Minor() < old.Minor():
		return None, false
	case new.Patch() > old.Patch():
		return Patch, true
	case new.Patch() < old.Patch():
		return None, false
	}
	return None, new.Compare(old) >= 0
}

// comparator is one "OP VERSION" condition.
type comparator struct {
	op string
	v  Version
}

func (c comparator) allows(v Version) bool {
	r := v.Compare(c.v)
	switch c.op {
	case ">=":
		return r >= 0
	case ">":
		return r > 0
	case "<=":
		return r <= 0
	case "<":
		return r < 0
	case "!=":
		return r != 0
	}
	return r == 0
}

// Spec is a version range: comparators joined by commas, all of which must hold.
//
//	>=1.2,<2.0,!=1.5   comparators (>=, >, <=, <, ==, !=, = as ==) with full or partial versions
//	*                  any version
//	x                  >=x.0.0,<(x+1).0.0
//	x.y                >=x.y.0,<x.(y+1).0
//	x.y.z              ==x.y.z
//	(empty)            >=0.0.0,<1.0.0
type Spec struct {
	text        string
	comparators []comparator
}

func (s Spec) String() string { return s.text }

// ParseSpec reads a spec; errors name the comparator and its position.
func ParseSpec(text string) (Spec, error) {
	s := Spec{text: text}
	if strings.TrimSpace(text) == "" {
		s.comparators = []comparator{{">=", MustParse("0.0.0")}, {"<", MustParse("1.0.0")}}
		return s, nil
	}
	for i, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return Spec{}, fmt.Errorf("spec %q: comparator %d is empty (two commas, or a comma at an end)", text, i+1)
		}
		cs, err := parseComparator(part)
		if err != nil {
			return Spec{}, fmt.Errorf("spec %q: comparator %d %q: %w", text, i+1, part, err)
		}
		s.comparators = append(s.comparators, cs...)
	}
	return s, nil
}

func parseComparator(part string) ([]comparator, error) {
	if part == "*" {
		return nil, nil
	}
	op := ""
	for _, candidate := range []string{">=", "<=", "==", "!=", ">", "<", "="} {
		if strings.HasPrefix(part, candidate) {
			op = candidate
			break
		}
	}
	rest := strings.TrimSpace(strings.TrimPrefix(part, op))
	if op == "=" {
		op = "=="
	}
	full, nums, err := partial(rest)
	if err != nil {
		return nil, err
	}
	if op != "" {
		if full.text == "" {
			// A partial version after an operator stands for its lowest version: >=1.2 is >=1.2.0.
			full = MustParse(fmt.Sprintf("%d.%d.%d", nums[0], at(nums, 1), at(nums, 2)))
		}
		return []comparator{{op, full}}, nil
	}
	switch len(nums) {
	case 1:
		return []comparator{
			{">=", MustParse(fmt.Sprintf("%d.0.0", nums[0]))},
			{"<", MustParse(fmt.Sprintf("%d.0.0", nums[0]+1))},
		}, nil
	case 2:
		return []comparator{
			{">=", MustParse(fmt.Sprintf("%d.%d.0", nums[0], nums[1]))},
			{"<", MustParse(fmt.Sprintf("%d.%d.0", nums[0], nums[1]+1))},
		}, nil
	}
	return []comparator{{"==", full}}, nil
}

func at(nums []uint64, i int) uint64 {
	if i < len(nums) {
		return nums[i]
	}
	return 0
}

// partial reads "x", "x.y" or a full version; full is set only for a full version.
func partial(s string) (full Version, nums []uint64, err error) {
	if s == "" {
		return Version{}, nil, fmt.Errorf("no version")
	}
	core := s
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		core = s[:i]
	}
	parts := strings.Split(strings.TrimPrefix(core, "v"), ".")
	if len(parts) > 3 {
		return Version{}, nil, fmt.Errorf("%q has more than three numeric parts", s)
	}
	for _, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil || (len(p) > 1 && p[0] == '0') {
			return Version{}, nil, fmt.Errorf("%q is not a version: %q is not a number", s, p)
		}
		nums = append(nums, n)
	}
	if len(parts) == 3 {
		full, err = Parse(s)
		if err != nil {
			return Version{}, nil, err
		}
	} else if core != s {
		return Version{}, nil, fmt.Errorf("%q: a pre-release or build suffix needs a full version", s)
	}
	return full, nums, nil
}

// Allows reports whether v satisfies every comparator.
func (s Spec) Allows(v Version) bool {
	for _, c := range s.comparators {
		if !c.allows(v) {
			return false
		}
	}
	return true
}

// Satisfying returns the versions the spec allows, in ascending order.
func (s Spec) Satisfying(vs []Version) []Version {
	var out []Version
	for _, v := range vs {
		if s.Allows(v) {
			out = append(out, v)
		}
	}
	Sort(out)
	return out
}

// Sort orders versions ascending.
func Sort(vs []Version) { sort.SliceStable(vs, func(i, j int) bool { return vs[i].Less(vs[j]) }) }

// Rule says how Resolve chose.
type Rule string

// Resolution rules, in the order they are tried.
const (
	RuleExact     Rule = "exact"
	RuleSameMinor Rule = "same-minor"
	RuleSameMajor Rule = "same-major"
	RuleNone      Rule = "none"
)

// Resolve picks the best match for wanted among available: the exact version; else the latest
// with the same major and minor; else the latest with the same major; else none.
func Resolve(wanted Version, available []Version) (Version, Rule) {
	var sameMinor, sameMajor *Version
	for i := range available {
		v := available[i]
		if v.Compare(wanted) == 0 {
			return v, RuleExact
		}
		if v.Major() != wanted.Major() {
			continue
		}
		if sameMajor == nil || sameMajor.Less(v) {
			sameMajor = &available[i]
		}
		if v.Minor() == wanted.Minor() && (sameMinor == nil || sameMinor.Less(v)) {
			sameMinor = &available[i]
		}
	}
	switch {
	case sameMinor != nil:
		return *sameMinor, RuleSameMinor
	case sameMajor != nil:
		return *sameMajor, RuleSameMajor
	}
	return Version{}, RuleNone
}
