package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

// DiffReport is what `cdkbot diff` shows: the stacks of a change, each with its diff.
type DiffReport struct {
	Stacks []*cfndiff.StackDiff
}

// DiffOptions choose what a diff view shows.
type DiffOptions struct {
	// ShowMetadata shows resources whose only change is their Metadata (aws:cdk:path and the
	// like), which are hidden by default because they change nothing in AWS.
	ShowMetadata bool
	// Color adds ANSI colours (text view only; set it only for a terminal).
	Color bool
	// Budget is the Markdown size limit in bytes (0: GitHub's 65,536-character comment limit).
	Budget int
	// FullDiffHint says where the full diff is when the Markdown had to be shortened.
	FullDiffHint string
	// Notes are words added to a resource's impact, by stack id and logical id: a likely move.
	Notes map[[2]string]string
	// FoldAssets counts the resources whose only change is an asset's hash (AssetOnly) in one
	// line per stack instead of listing them (the review's default; asset-changes: show lists them).
	FoldAssets bool
}

// Counts tallies resource changes across all stacks, nested ones included.
type Counts struct {
	Create, Update, Replace, MayReplace int
	Destroy, Orphan, Import             int
	StacksChanged                       int
	Broadened                           bool
	Worst                               *cfndiff.Finding // the most severe permission change
	MetadataOnly                        int              // changes that change nothing in AWS (hidden)
}

// Count tallies the report.
func (r DiffReport) Count() Counts {
	var c Counts
	for _, top := range r.Stacks {
		c.Add(top)
	}
	return c
}

// Add tallies one top-level stack (its nested stacks included) into the counts: a report's
// stacks added in order count as Count does, so a view written stack by stack can tally as it goes.
func (c *Counts) Add(top *cfndiff.StackDiff) {
	if top.ChangedSignificantly() {
		c.StacksChanged++
	}
	for _, s := range top.All() {
		for _, res := range s.Diff.Resources {
			if res.MetadataOnly() {
				c.MetadataOnly++ // shown with --show-metadata, never counted as a change
				continue
			}
			switch res.Impact {
			case cfndiff.Create:
				c.Create++
			case cfndiff.Update:
				c.Update++
			case cfndiff.Replace:
				c.Replace++
			case cfndiff.MayReplace:
				c.MayReplace++
			case cfndiff.Destroy:
				c.Destroy++
			case cfndiff.Orphan:
				c.Orphan++
			case cfndiff.Import:
				c.Import++
			}
		}
		if s.Diff.Security.Broadened() {
			c.Broadened = true
		}
		if f, ok := s.Diff.Security.Worst(); ok && (c.Worst == nil || f.Severity > c.Worst.Severity) {
			f.What = s.DisplayName + " " + f.What
			c.Worst = &f
		}
	}
}

// HasChanges is true when any stack differs.
func (r DiffReport) HasChanges() bool { return r.Count().StacksChanged > 0 }

// visibleResources returns the resource changes a view shows, and how many it hides.
func visibleResources(d *cfndiff.TemplateDiff, opts DiffOptions) ([]*cfndiff.ResourceChange, int) {
	var out []*cfndiff.ResourceChange
	hidden := 0
	for _, r := range d.Resources {
		if r.MetadataOnly() && !opts.ShowMetadata {
			hidden++
			continue
		}
		out = append(out, r)
	}
	return out, hidden
}

// headline is the one line a reviewer acts on: what changes and what is dangerous.
func headline(c Counts) string {
	if c.StacksChanged == 0 {
		return "no changes"
	}
	parts := []string{plural(c.StacksChanged, "stack changes", "stacks change")}
	add := func(n int, one, many string) {
		if n > 0 {
			parts = append(parts, plural(n, one, many))
		}
	}
	add(c.Replace, "replacement", "replacements")
	add(c.MayReplace, "possible replacement", "possible replacements")
	add(c.Destroy, "destroy", "destroys")
	add(c.Orphan, "orphan", "orphans")
	add(c.Create, "create", "creates")
	add(c.Update, "update", "updates")
	add(c.Import, "import", "imports")
	if c.Broadened {
		parts = append(parts, broadened(c))
	}
	return strings.Join(parts, " · ")
}

// broadened names the worst permission change: "ShopNetwork opens port 22 to the internet (critical)".
func broadened(c Counts) string {
	if c.Worst == nil {
		return "permissions broadened"
	}
	return fmt.Sprintf("%s (%s)", c.Worst.What, c.Worst.Level)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// valuePair renders the two sides of a change within limit each. Long values that share a
// beginning (a buildspec, a state machine definition) are shown around their first difference,
// both sides cut the same way, so the change is visible instead of an identical prefix.
func valuePair(old any, oldOK bool, new any, newOK bool, limit int) (string, string) {
	if !oldOK || !newOK {
		return valueText(old, oldOK, limit), valueText(new, newOK, limit)
	}
	a, b := cfn.JSON(old), cfn.JSON(new)
	if len(a) <= limit && len(b) <= limit {
		return a, b
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	start := max(0, i-limit/4)
	if start == 0 || i < limit-limit/4 {
		return valueText(old, true, limit), valueText(new, true, limit)
	}
	return window(a, start, limit), window(b, start, limit)
}

// window is s from byte start, limit bytes at most, on UTF-8 boundaries, with ellipses where cut.
func window(s string, start, limit int) string {
	for start > 0 && start < len(s) && (s[start]&0xC0) == 0x80 {
		start--
	}
	if start >= len(s) {
		return "…"
	}
	end := min(len(s), start+limit)
	for end < len(s) && end > start && (s[end]&0xC0) == 0x80 {
		end--
	}
	out := "…" + s[start:end]
	if end < len(s) {
		out += "…"
	}
	return out
}

// valueText renders a template value compactly for a table cell or a line.
func valueText(v any, present bool, limit int) string {
	if !present {
		return "(absent)"
	}
	s := cfn.JSON(v)
	if len(s) > limit {
		cut := limit
		for cut > 0 && (s[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// stackTitle names a stack as users know it.
func stackTitle(s *cfndiff.StackDiff) string {
	name := s.DisplayName
	if name == "" {
		name = s.ID
	}
	if s.StackName != "" && s.StackName != name && !strings.HasSuffix(s.ID, "/"+s.StackName) {
		name += " (" + s.StackName + ")"
	}
	return name
}

func sortedImpactOrder(rs []*cfndiff.ResourceChange) []*cfndiff.ResourceChange {
	out := append([]*cfndiff.ResourceChange(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].LogicalID < out[j].LogicalID })
	return out
}
