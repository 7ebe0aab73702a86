package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

// palette colours text by role; the zero palette leaves it plain.
type palette struct{ on bool }

func (p palette) paint(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p palette) impact(i cfndiff.Impact, s string) string {
	switch i {
	case cfndiff.Create:
		return p.paint("32", s)
	case cfndiff.Update, cfndiff.Import:
		return p.paint("33", s)
	case cfndiff.Replace, cfndiff.MayReplace, cfndiff.Destroy, cfndiff.Orphan:
		return p.paint("31;1", s)
	}
	return s
}

func (p palette) bold(s string) string { return p.paint("1", s) }
func (p palette) dim(s string) string  { return p.paint("2", s) }

// DiffText writes the report for a terminal. Every name and value from the templates is cleaned
// (Clean) before it is painted.
func DiffText(w io.Writer, r DiffReport, opts DiffOptions) error {
	if err := DiffTextHeadline(w, r.Count(), opts); err != nil {
		return err
	}
	for _, s := range r.Stacks {
		if err := DiffTextStack(w, s, opts); err != nil {
			return err
		}
	}
	return nil
}

// DiffTextHeadline writes the text view's first line, for the counts of all its stacks: with
// DiffTextStack, the text view can be written stack by stack (the stacks' sections after it).
func DiffTextHeadline(w io.Writer, c Counts, opts DiffOptions) error {
	ew := &errWriter{w: w}
	ew.printf("%s %s\n", palette{on: opts.Color}.bold("cdkbot diff:"), Clean(headline(c)))
	return ew.err
}

// DiffTextStack writes one top-level stack's section of the text view.
func DiffTextStack(w io.Writer, s *cfndiff.StackDiff, opts DiffOptions) error {
	ew := &errWriter{w: w}
	writeStackText(ew, palette{on: opts.Color}, s, opts, 0)
	return ew.err
}

func writeStackText(ew *errWriter, p palette, s *cfndiff.StackDiff, opts DiffOptions, depth int) {
	indent := strings.Repeat("  ", depth)
	kind := "Stack"
	if depth > 0 {
		kind = "Nested stack"
	}
	env := ""
	if s.Environment != "" {
		env = "  " + p.dim(Clean(s.Environment))
	}
	ew.printf("\n%s%s %s%s  %s\n", indent, kind, p.bold(Clean(stackTitle(s))), env, s.Status)
	if s.Status == cfndiff.StackUnchanged {
		return
	}
	d := s.Diff
	in := indent + "  "
	resources, hidden := visibleResources(d, opts)
	resources, assets := foldAssets(resources, opts.FoldAssets)
	if len(resources) > 0 {
		ew.printf("%sResources\n", in)
	}
	for _, res := range sortedImpactOrder(resources) {
		label := fmt.Sprintf("[%s] %-11s", res.Impact.Symbol(), res.Impact)
		path := ""
		if cp := s.Paths[res.LogicalID]; cp != "" {
			path = "  " + p.dim(Clean(cp))
		}
		ew.printf("%s%s %s %s%s\n", in, p.impact(res.Impact, label), Clean(res.Type()), p.bold(Clean(res.LogicalID)), path)
		detail := in + "      "
		if res.OldType != res.NewType && res.OldType != "" && res.NewType != "" {
			ew.printf("%stype %s → %s\n", detail, Clean(res.OldType), Clean(res.NewType))
		}
		if note := res.VerdictNote(); note != "" {
			ew.printf("%s%s\n", detail, Clean(note))
		}
		if cons := res.Consequence(); cons != "" && res.Impact != cfndiff.Create {
			ew.printf("%s%s\n", detail, p.impact(res.Impact, Clean(cons)))
		}
		if res.UnknownType {
			ew.printf("%s%s\n", detail, p.dim("type unknown to the resource specification: changes assumed to update in place"))
		}
		for _, pc := range res.Properties {
			ew.printf("%s%s %s  %s\n", detail, p.impact(pc.Impact, "["+pc.Impact.Symbol()+"]"), Clean(pc.Name),
				Clean(propertyLine(pc)))
			details, more := pc.Details()
			if len(details) == 1 && details[0].Path == "" {
				continue // propertyLine already showed old → new
			}
			for _, dt := range details {
				oldText, newText := valuePair(dt.Old, dt.OldPresent, dt.New, dt.NewPresent, 80)
				ew.printf("%s    %s: %s → %s\n", detail, Clean(dt.Path), Clean(oldText), Clean(newText))
			}
			if more {
				ew.printf("%s    %s\n", detail, p.dim("… more changes inside this property"))
			}
		}
		for _, o := range res.Other {
			oldText, newText := valuePair(o.Old, o.OldPresent, o.New, o.NewPresent, 80)
			ew.printf("%s[~] %s  %s → %s\n", detail, Clean(o.Key), Clean(oldText), Clean(newText))
		}
	}
	if len(assets) > 0 {
		var names []string
		for i, r := range assets {
			if i == 5 {
				names = append(names, fmt.Sprintf("and %d more", len(assets)-5))
				break
			}
			names = append(names, Clean(r.LogicalID))
		}
		ew.printf("%s%s: only their asset hashes changed (%s; --asset-changes show lists them)\n", in,
			plural(len(assets), "asset changed", "assets changed"), strings.Join(names, ", "))
	}
	if hidden > 0 {
		ew.printf("%s%s\n", in, p.dim(fmt.Sprintf(
			"(%s with only metadata changes hidden (aws:cdk:path, CDK analytics); --show-metadata shows them)",
			plural(hidden, "resource", "resources"))))
	}
	for _, sec := range []struct {
		name string
		d    cfndiff.SectionDiff
	}{{"Template", d.Attributes}, {"Parameters", d.Parameters}, {"Outputs", d.Outputs}, {"Conditions", d.Conditions},
		{"Mappings", d.Mappings}, {"Metadata", d.Metadata}, {"Other sections", d.Unknown}} {
		if len(sec.d.Changes) == 0 {
			continue
		}
		ew.printf("%s%s\n", in, sec.name)
		for _, ch := range sec.d.Changes {
			sym := map[cfndiff.ChangeKind]string{cfndiff.Added: "+", cfndiff.Removed: "-", cfndiff.Updated: "~"}[ch.Kind()]
			ew.printf("%s[%s] %s\n", in, sym, Clean(ch.Key))
		}
	}
	writeSecurityText(ew, p, d.Security, in)
	for _, n := range s.Nested {
		writeStackText(ew, p, n, opts, depth+1)
	}
}

func propertyLine(pc *cfndiff.PropertyChange) string {
	var b strings.Builder
	details, _ := pc.Details()
	switch {
	case pc.Changed && len(details) == 1 && details[0].Path == "":
		oldText, newText := valuePair(pc.Old, pc.OldPresent, pc.New, pc.NewPresent, 80)
		b.WriteString(oldText)
		b.WriteString(" → ")
		b.WriteString(newText)
	case pc.Changed:
		b.WriteString("changed:")
	default:
		b.WriteString("value unchanged")
	}
	if len(pc.ReplacedReferences) > 0 {
		fmt.Fprintf(&b, " (resolves anew: references replaced %s)", strings.Join(pc.ReplacedReferences, ", "))
	}
	for _, in := range pc.ChangedInputs {
		fmt.Fprintf(&b, " (resolves anew: reads %s, which changes: %s)", in.Name, in.Why)
	}
	if pc.Unknown {
		b.WriteString(" (not in the specification: assumed update)")
	}
	return b.String()
}

func writeSecurityText(ew *errWriter, p palette, sec cfndiff.Security, in string) {
	if !sec.AnyChanges() {
		return
	}
	verdict := "permissions change"
	if sec.Broadened() {
		verdict = "permissions BROADENED"
	}
	ew.printf("%sSecurity: %s\n", in, p.paint("31;1", verdict))
	for _, st := range sec.StatementsAdded {
		ew.printf("%s  %s IAM %s\n", in, p.impact(cfndiff.Create, "[+]"), Clean(statementLine(st)))
	}
	for _, st := range sec.StatementsRemoved {
		ew.printf("%s  %s IAM %s\n", in, p.impact(cfndiff.Destroy, "[-]"), Clean(statementLine(st)))
	}
	for _, m := range sec.ManagedPoliciesAdded {
		ew.printf("%s  %s managed policy %s on %s\n", in, p.impact(cfndiff.Create, "[+]"), Clean(m.ManagedPolicyARN),
			Clean(m.IdentityARN))
	}
	for _, m := range sec.ManagedPoliciesRemoved {
		ew.printf("%s  %s managed policy %s on %s\n", in, p.impact(cfndiff.Destroy, "[-]"), Clean(m.ManagedPolicyARN),
			Clean(m.IdentityARN))
	}
	for _, r := range sec.RulesAdded {
		ew.printf("%s  %s %s\n", in, p.impact(cfndiff.Create, "[+]"), Clean(ruleLine(r)))
	}
	for _, r := range sec.RulesRemoved {
		ew.printf("%s  %s %s\n", in, p.impact(cfndiff.Destroy, "[-]"), Clean(ruleLine(r)))
	}
}

func statementLine(st cfndiff.Statement) string {
	if st.Unparseable != "" {
		return "statement that cannot be analysed: " + st.Unparseable
	}
	s := fmt.Sprintf("%s %s on %s for %s",
		st.Effect, targetsText(st.Actions), targetsText(st.Resources), targetsText(st.Principals))
	if st.HasCondition {
		s += " when " + valueText(st.Condition, true, 120)
	}
	return s
}

func targetsText(t cfndiff.Targets) string {
	s := strings.Join(t.Values, ", ")
	if s == "" {
		s = "(none)"
	}
	if t.Not {
		return "NOT " + s
	}
	return s
}

func ruleLine(r cfndiff.SecurityGroupRule) string {
	dir := "from"
	if r.Direction == "egress" {
		dir = "to"
	}
	return fmt.Sprintf("%s %s %s %s %s", r.Direction, r.GroupID, protocolText(r), dir, peerText(r))
}

func protocolText(r cfndiff.SecurityGroupRule) string {
	if r.IPProtocol == "-1" {
		return "everything"
	}
	proto := strings.ToUpper(r.IPProtocol)
	from, to := valueText(r.FromPort, r.FromPort != nil, 20), valueText(r.ToPort, r.ToPort != nil, 20)
	switch {
	case from == "-1":
		return "all " + proto
	case from == to:
		return proto + " " + from
	}
	return proto + " " + from + "-" + to
}

func peerText(r cfndiff.SecurityGroupRule) string {
	if r.Peer == nil {
		return "?"
	}
	switch r.Peer.Value {
	case "0.0.0.0/0":
		return "everyone (IPv4)"
	case "::/0":
		return "everyone (IPv6)"
	}
	return r.Peer.Value
}
