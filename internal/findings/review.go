package findings

import (
	"fmt"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

// Review is the findings of a change: the head's, each compared with the base's (nil: no base,
// everything is new), of the stacks keep selects (nil: all; findings of no known stack stay);
// nil when there is nothing to show. A head report that cannot be read is the returned report's
// Problem; the base's only makes the comparison weaker, so it is not reported.
func Review(base, head *assembly.Assembly, keep func(*assembly.Stack) bool) *Report {
	r, err := Read(head)
	if err != nil {
		r.Problem = "the head assembly's " + err.Error()
	}
	var b *Report
	if base != nil {
		b, _ = Read(base)
	}
	if keep != nil {
		kept := map[string]bool{}
		for _, s := range head.AllStacks() {
			kept[s.QualifiedID()] = keep(s)
		}
		var out []Finding
		for _, f := range r.Findings {
			if f.Stack == "" || kept[f.Stack] {
				out = append(out, f)
			}
		}
		r.Findings = out
	}
	Compare(r, b)
	if r.Empty() {
		return nil
	}
	return r
}

// GateItems are what the validation-error gate counts: validation errors the base did not have
// (or that could not be compared with it), validation plugins that failed to run, and a report
// that could not be read. Error annotations are the incomplete gate's.
func GateItems(r *Report) []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, f := range r.Findings {
		if f.Source != Validation || !f.Severity.Blocks() || f.Status == Existing {
			continue
		}
		out = append(out, f.Describe())
	}
	for _, why := range r.Failures {
		out = append(out, "validation did not run: "+why)
	}
	if r.Problem != "" {
		out = append(out, r.Problem)
	}
	return out
}

// Describe is the finding in one line: who found it, what, where.
func (f Finding) Describe() string {
	who := f.Plugin
	if f.Rule != "" {
		if who != "" {
			who += " "
		}
		who += f.Rule
	}
	if who == "" {
		who = f.Source.String()
	}
	where := ""
	switch {
	case f.Path != "":
		where = " on " + f.Path
	case f.LogicalID != "":
		where = " on " + f.LogicalID
	}
	if f.Stack != "" {
		where += " in " + f.Stack
	}
	return fmt.Sprintf("%s%s: %s", who, where, f.Message)
}
