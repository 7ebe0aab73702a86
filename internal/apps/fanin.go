package apps

import (
	"fmt"
	"sort"
)

// Report is what one leg reported: its report file, which is data produced where pull request
// code ran, so nothing in it is trusted beyond what Combine checks.
type Report struct {
	Key     string
	HeadSHA string // the commit its review was of (from its marker)
	Failed  bool   // its gates blocked
	Review  []byte // its review as JSON, rendered by the fan-in's views with everything escaped
	// Record is what the leg's review recorded for the merge deploy (its comment's marker, as
	// JSON): the combined comment carries it, so the deploy of this leg is bound to it.
	Record []byte
	Source string // where it was read (a file), for messages
}

// Outcome is what the fan-in makes of one leg: a tiny enum with a symbol.
type Outcome int

// Outcomes; every one but Passed and NotRun blocks the combined review (fail closed).
const (
	Passed  Outcome = iota // reviewed; no gate blocks
	Blocked                // reviewed; a gate blocks
	Missing                // touched, but no report came back: the leg failed or never ran
	Invalid                // a report came back that cannot stand for the leg
	NotRun                 // unchanged: not synthesized, nothing to review
	// Gone is a removed app: nothing to review or deploy, its stacks left deployed (said, not blocking).
	Gone
)

var outcomeNames = [...]string{"passed", "blocked", "missing", "invalid", "unchanged", "removed"}

func (o Outcome) String() string { return outcomeNames[o] }

// Symbol marks the outcome in views.
func (o Outcome) Symbol() string { return [...]string{"✅", "❌", "❌", "❌", "➖", "⚠️"}[o] }

// MarshalText writes the outcome's name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Section is one leg of the combined review.
type Section struct {
	Leg
	Outcome Outcome `json:"outcome"`
	// Problem says, in cdkbot's words, why a leg is missing or invalid.
	Problem string `json:"problem,omitempty"`
	Review  []byte `json:"-"` // the leg's review (untrusted JSON), when reported
	Record  []byte `json:"-"` // what the leg's review recorded for the deploy (Report.Record), when reported
}

// Combined is the fan-in: one section per leg of the plan, blocked ones first, then the passed,
// then the removed, then the unchanged, and notes about reports no leg asked for.
type Combined struct {
	Key      string    `json:"key"`
	HeadSHA  string    `json:"headSha"`
	Sections []Section `json:"sections"`
	Notes    []string  `json:"notes,omitempty"`
	// Verified is true when the legs' reports are as trusted as a review comment the same
	// workflow would have posted: they came from the pull request's own workflow run, not a
	// fork's. Only then does the merge deploy take the legs' records as what was reviewed.
	Verified bool `json:"verified,omitempty"`
}

// Failed is true when any leg blocks, is missing or sent a report that cannot stand.
func (c Combined) Failed() bool {
	for _, s := range c.Sections {
		if s.Outcome != Passed && s.Outcome != NotRun && s.Outcome != Gone {
			return true
		}
	}
	return false
}

// Count is how many sections have outcome o.
func (c Combined) Count(o Outcome) int {
	n := 0
	for _, s := range c.Sections {
		if s.Outcome == o {
			n++
		}
	}
	return n
}

// Combine matches the legs' reports to the plan's legs by key. A touched leg without a report
// is missing; two reports for one leg, or a report of another commit, are invalid; a report for
// no leg of the plan is left out with a note. Only the plan (which cdkbot made without running
// pull request code) says which legs there are.
func Combine(p Plan, headSHA string, reports []Report) Combined {
	c := Combined{Key: p.Key, HeadSHA: headSHA}
	byKey := map[string][]Report{}
	for _, r := range reports {
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	legsOfKey := map[string]int{}
	for _, l := range p.Legs {
		legsOfKey[l.Key]++
	}
	known := map[string]bool{}
	for _, l := range p.Legs {
		known[l.Key] = true
		s := Section{Leg: l}
		rs := byKey[l.Key]
		switch {
		case legsOfKey[l.Key] > 1:
			// One report would stand for every leg of the key, a leg that never reported among them.
			s.Outcome, s.Problem = Invalid, fmt.Sprintf("%d legs share the key %s: give the apps names "+
				"of their own (.cdkbot.yml apps.list)", legsOfKey[l.Key], l.Key)
		case l.Status == Unchanged:
			s.Outcome = NotRun
		case l.Status == Removed:
			s.Outcome = Gone // a report claiming it is a stray: nothing was there to review
		case len(rs) == 0:
			s.Outcome, s.Problem = Missing, "no report came back: the leg failed or did not run (its job log says why)"
		case len(rs) > 1:
			s.Outcome, s.Problem = Invalid, fmt.Sprintf("%d reports claim this leg (%s and %s): none is taken",
				len(rs), rs[0].Source, rs[1].Source)
		case headSHA == "":
			s.Outcome, s.Problem = Invalid, "the fan-in does not know the head commit, so it cannot tell a fresh "+
				"report from a stale one: give the plan's head (cdkbot apps --head) or --head-sha"
		case rs[0].HeadSHA != headSHA:
			s.Outcome, s.Problem = Invalid, fmt.Sprintf("its report (%s) is of another commit than the head reviewed",
				rs[0].Source)
		case rs[0].Failed:
			s.Outcome, s.Review, s.Record = Blocked, rs[0].Review, rs[0].Record
		default:
			s.Outcome, s.Review, s.Record = Passed, rs[0].Review, rs[0].Record
		}
		c.Sections = append(c.Sections, s)
	}
	var stray []string
	for k, rs := range byKey {
		if !known[k] {
			for _, r := range rs {
				stray = append(stray, r.Source)
			}
		}
	}
	sort.Strings(stray)
	for _, s := range stray {
		c.Notes = append(c.Notes, fmt.Sprintf("the report %s is for no app of this change: left out", s))
	}
	rank := func(o Outcome) int { return [...]int{1, 0, 0, 0, 3, 2}[o] }
	sort.SliceStable(c.Sections, func(i, j int) bool {
		return rank(c.Sections[i].Outcome) < rank(c.Sections[j].Outcome)
	})
	return c
}
