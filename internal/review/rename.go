package review

import (
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

// Move is a resource the change most likely moves rather than replaces: removed (destroyed or
// orphaned) under one logical id and created with the same type and the same properties under
// another, in the same stack (a renamed construct) or another stack of the same environment (a
// construct moved between stacks). Deployed as is, CloudFormation creates a new resource and
// deletes or orphans the old one; `cdk refactor` moves the resource instead (aws-cdk#8120).
type Move struct {
	Type string  `json:"type"`
	From MoveEnd `json:"from"`
	To   MoveEnd `json:"to"`
}

// MoveEnd is one side of a move.
type MoveEnd struct {
	Stack     string `json:"stack"` // the stack's qualified id
	LogicalID string `json:"logicalId"`
	Path      string `json:"path,omitempty"` // construct path, when the assembly says
	// Impact is what CloudFormation would do to the resource on this side: destroy or orphan for
	// the old one, create for the new one.
	Impact string `json:"impact"`
}

// maxMoveComparisons bounds the pairs of removed and created resources compared: the diff comes
// from the pull request, and a hostile one must not make the review quadratic. maxMoveWork
// bounds what those comparisons cost, in values: comparing two resources' properties costs at
// most the product of their sizes (Tags, security-group rules and policy documents compare as
// sets), and rewriting one's references its size, so a few resources with tags by the ten
// thousand cannot keep the review busy for hours either. A move is a hint: a pair past the bound
// is not compared, and neither of its ends is hinted.
const (
	maxMoveComparisons = 200_000
	maxMoveWork        = 1 << 30
)

// Moves finds the likely moves among the top-level stacks of a diff. A pair is a move only when
// neither side has another candidate: two identical buckets removed and one created is no hint
// (`cdk refactor` asks for an explicit mapping then too). References between moved resources
// of one stack are followed: a policy naming a moved bucket by its old logical id matches the
// policy naming it by the new one.
func Moves(stacks []*cfndiff.StackDiff) []Move {
	type end struct {
		stack *cfndiff.StackDiff
		res   *cfndiff.ResourceChange
	}
	var removed, added []end
	for _, s := range stacks { // nested stacks are left out: cdk refactor moves top-level resources
		for _, r := range s.Diff.Resources {
			switch {
			case r.Removed() && (r.Impact == cfndiff.Destroy || r.Impact == cfndiff.Orphan):
				removed = append(removed, end{s, r})
			case r.Added() && r.Impact == cfndiff.Create:
				added = append(added, end{s, r})
			}
		}
	}
	if len(removed) == 0 || len(added) == 0 {
		return nil
	}
	renamed := map[string]map[string]string{} // stack id -> old logical id -> new logical id
	matched, unsure := map[*cfndiff.ResourceChange]bool{}, map[*cfndiff.ResourceChange]bool{}
	size := map[*cfndiff.ResourceChange]int{}
	for _, e := range removed {
		size[e.res] = values(property(e.res.Old))
	}
	for _, e := range added {
		size[e.res] = values(property(e.res.New))
	}
	var out []Move
	budget, work := maxMoveComparisons, maxMoveWork
	for {
		found := false
		candidates := map[*cfndiff.ResourceChange][]end{}
		for _, o := range removed {
			if matched[o.res] {
				continue
			}
			if len(renamed[o.stack.ID]) > 0 {
				if size[o.res] > work {
					unsure[o.res] = true
					continue
				}
				work -= size[o.res]
			}
			props := rewriteRefs(property(o.res.Old), renamed[o.stack.ID])
			for _, n := range added {
				if matched[n.res] || o.res.OldType != n.res.NewType || o.stack.Environment != n.stack.Environment {
					continue
				}
				if budget--; budget < 0 {
					return sortMoves(out)
				}
				// A pair too costly to compare is not compared, and neither end is hinted: it
				// might have been the other candidate that makes the hint ambiguous.
				cost := size[o.res] * size[n.res]
				if cost > work {
					unsure[o.res], unsure[n.res] = true, true
					continue
				}
				work -= cost
				if cfndiff.Equal(props, property(n.res.New)) {
					candidates[o.res] = append(candidates[o.res], n)
					candidates[n.res] = append(candidates[n.res], o)
				}
			}
		}
		for _, o := range removed {
			c := candidates[o.res]
			if matched[o.res] || len(c) != 1 || len(candidates[c[0].res]) != 1 || unsure[o.res] || unsure[c[0].res] {
				continue
			}
			n := c[0]
			matched[o.res], matched[n.res], found = true, true, true
			if o.stack.ID == n.stack.ID {
				if renamed[o.stack.ID] == nil {
					renamed[o.stack.ID] = map[string]string{}
				}
				renamed[o.stack.ID][o.res.LogicalID] = n.res.LogicalID
			}
			out = append(out, Move{Type: o.res.OldType,
				From: MoveEnd{Stack: o.stack.ID, LogicalID: o.res.LogicalID, Path: o.stack.Paths[o.res.LogicalID],
					Impact: o.res.Impact.String()},
				To: MoveEnd{Stack: n.stack.ID, LogicalID: n.res.LogicalID, Path: n.stack.Paths[n.res.LogicalID],
					Impact: n.res.Impact.String()}})
		}
		if !found {
			return sortMoves(out)
		}
	}
}

func sortMoves(m []Move) []Move {
	sort.Slice(m, func(i, j int) bool {
		if m[i].From.Stack != m[j].From.Stack {
			return m[i].From.Stack < m[j].From.Stack
		}
		return m[i].From.LogicalID < m[j].From.LogicalID
	})
	return m
}

// property is a resource's Properties ("" properties and none are the same: an empty object).
func property(resource *cfn.Object) any {
	if resource == nil {
		return cfn.NewObject()
	}
	v, ok := resource.Get("Properties")
	if !ok || v == nil {
		return cfn.NewObject()
	}
	return v
}

// values counts the values of v, itself included: what comparing or copying it costs.
func values(v any) int {
	n := 1
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			n += values(e)
		}
	case *cfn.Object:
		for _, k := range x.Keys() {
			val, _ := x.Get(k)
			n += values(val)
		}
	}
	return n
}

// rewriteRefs is v with references to renamed logical ids (Ref, Fn::GetAtt in both forms,
// Fn::Sub's ${Id} and ${Id.Attr}) written with the new ids.
func rewriteRefs(v any, renamed map[string]string) any {
	if len(renamed) == 0 {
		return v
	}
	return rewrite(cfn.Clone(v), renamed)
}

func rewrite(v any, renamed map[string]string) any {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			x[i] = rewrite(e, renamed)
		}
		return x
	case *cfn.Object:
		if name, arg, ok := cfn.Intrinsic(x); ok {
			switch name {
			case "Ref":
				if s, ok := arg.(string); ok && renamed[s] != "" {
					x.Set(name, renamed[s])
					return x
				}
			case "Fn::GetAtt":
				switch a := arg.(type) {
				case string:
					if id, attr, ok := strings.Cut(a, "."); ok && renamed[id] != "" {
						x.Set(name, renamed[id]+"."+attr)
						return x
					}
				case []any:
					if len(a) > 0 {
						if id, ok := a[0].(string); ok && renamed[id] != "" {
							a[0] = renamed[id]
						}
					}
				}
			case "Fn::Sub":
				switch a := arg.(type) {
				case string:
					x.Set(name, rewriteSub(a, renamed))
					return x
				case []any:
					if len(a) > 0 {
						if s, ok := a[0].(string); ok {
							a[0] = rewriteSub(s, renamed)
						}
					}
				}
			}
		}
		for _, k := range x.Keys() {
			val, _ := x.Get(k)
			x.Set(k, rewrite(val, renamed))
		}
		return x
	}
	return v
}

func rewriteSub(s string, renamed map[string]string) string {
	for _, variable := range cfn.SubVariables(s) {
		id, attr, hasAttr := strings.Cut(variable, ".")
		if renamed[id] == "" {
			continue
		}
		to := renamed[id]
		if hasAttr {
			to += "." + attr
		}
		s = strings.ReplaceAll(s, "${"+variable+"}", "${"+to+"}")
	}
	return s
}
