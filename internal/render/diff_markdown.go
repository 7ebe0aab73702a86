package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

// GitHubCommentLimit is the largest body GitHub accepts for a comment (65,536 characters); the
// budget is kept in bytes, which is never more than the character count allows.
const GitHubCommentLimit = 65536

// Detail levels of a stack in the Markdown view, degraded one step at a time to fit the budget.
const (
	levelOmitted   = iota // only counted in "… more stacks"
	levelSummary          // one line
	levelResources        // resource table and security tables
	levelFull             // plus property changes and section changes
)

const (
	valueLimit     = 120 // bytes of a value shown in a table cell
	attentionLimit = 50  // items in the "needs attention" list
)

// DiffMarkdown writes the report as GitHub Markdown within opts.Budget bytes. The report is held
// anyway: each stack's texts are rendered to be weighed, and again once chosen, not kept.
func DiffMarkdown(w io.Writer, r DiffReport, opts DiffOptions) error {
	held := &heldStacks{opts: opts}
	layout := markdownLayout{opts: opts}
	for _, s := range r.Stacks {
		if layout.add(s) {
			held.stacks = append(held.stacks, s)
			held.sizes = append(held.sizes, [levelFull + 1]int{-1, -1, -1, -1})
		}
	}
	return layout.write(w, held)
}

// heldStacks are the changed stacks of a report held whole, each text rendered when it is
// weighed or written: only the sizes are kept.
type heldStacks struct {
	stacks []*cfndiff.StackDiff
	opts   DiffOptions
	sizes  [][levelFull + 1]int // by stack and level; -1 until rendered
}

func (h *heldStacks) size(i, level int) int {
	if h.sizes[i][level] < 0 {
		h.sizes[i][level] = len(stackMarkdown(h.stacks[i], level, h.opts))
	}
	return h.sizes[i][level]
}

func (h *heldStacks) writeText(w io.Writer, i, level int) error {
	_, err := io.WriteString(w, stackMarkdown(h.stacks[i], level, h.opts))
	return err
}

// Spool holds a view's text written stack by stack until it is read back: a temporary file.
type Spool interface {
	io.Writer
	io.ReaderAt
}

// DiffMarkdownStream writes DiffMarkdown's view stack by stack: each changed stack's text at every
// detail level goes to the spool when the stack is given, and only where it is stays, with the
// counts, the attention items the list can show and the unchanged stacks the line names. Close
// weighs the budget on those sizes, as DiffMarkdown does, and copies the chosen texts from the
// spool: the same bytes as DiffMarkdown for the same stacks in the same order, without holding
// the report.
type DiffMarkdownStream struct {
	layout    markdownLayout
	spool     Spool
	spoolSize int64
	texts     [][levelFull + 1]spoolSpan // by changed stack and level; [levelOmitted] is empty
	err       error
}

type spoolSpan struct{ off, size int64 }

// NewDiffMarkdownStream starts a Markdown diff view; spool must be empty.
func NewDiffMarkdownStream(spool Spool, opts DiffOptions) *DiffMarkdownStream {
	return &DiffMarkdownStream{layout: markdownLayout{opts: opts}, spool: spool}
}

// Stack adds the next top-level stack: its texts go to the spool.
func (m *DiffMarkdownStream) Stack(s *cfndiff.StackDiff) error {
	if m.err != nil || !m.layout.add(s) {
		return m.err
	}
	var spans [levelFull + 1]spoolSpan
	for level := levelSummary; level <= levelFull; level++ {
		text := stackMarkdown(s, level, m.layout.opts)
		spans[level] = spoolSpan{m.spoolSize, int64(len(text))}
		if _, m.err = io.WriteString(m.spool, text); m.err != nil {
			return m.err
		}
		m.spoolSize += int64(len(text))
	}
	m.texts = append(m.texts, spans)
	return nil
}

// Close writes the view to w within the budget.
func (m *DiffMarkdownStream) Close(w io.Writer) error {
	if m.err != nil {
		return m.err
	}
	return m.layout.write(w, m)
}

func (m *DiffMarkdownStream) size(i, level int) int { return int(m.texts[i][level].size) }

func (m *DiffMarkdownStream) writeText(w io.Writer, i, level int) error {
	span := m.texts[i][level]
	_, err := io.Copy(w, io.NewSectionReader(m.spool, span.off, span.size))
	return err
}

// stackTexts are the texts of the changed stacks of a Markdown view, by stack and detail level:
// their sizes to weigh against the budget, and the texts chosen.
type stackTexts interface {
	size(i, level int) int
	writeText(w io.Writer, i, level int) error
}

// markdownLayout is what the Markdown view weighs against its budget besides the stacks' texts,
// gathered stack by stack: the counts, the attention items the list can show, the unchanged
// stacks the line names, and the level each changed stack is shown at.
type markdownLayout struct {
	opts       DiffOptions
	counts     Counts
	levels     []int    // by changed stack, in order
	attention  []string // the first attentionLimit items of the "needs attention" list
	attentionN int      // items of the list, shown or not
	unchanged  []string // the first unchangedStackNames unchanged stacks' names
	unchangedN int      // unchanged stacks, named or not
}

// add tallies the next top-level stack, and says whether it changes: only then does it have texts.
func (l *markdownLayout) add(s *cfndiff.StackDiff) bool {
	l.counts.Add(s)
	for _, item := range attentionItems(s) {
		if len(l.attention) < attentionLimit {
			l.attention = append(l.attention, item)
		}
		l.attentionN++
	}
	if !s.Changed() { // counted with the other unchanged stacks, in one line
		if len(l.unchanged) < unchangedStackNames {
			l.unchanged = append(l.unchanged, "<b>"+mdHTML(truncate(stackTitle(s), 120))+"</b>")
		}
		l.unchangedN++
		return false
	}
	l.levels = append(l.levels, levelFull)
	return true
}

// write writes the view to w within the budget: the biggest, most detailed stack is degraded one
// level at a time (full, resources, one line, left out) until the view fits, then the attention
// list is shortened, and what still does not fit is cut.
func (l *markdownLayout) write(w io.Writer, texts stackTexts) error {
	budget := l.opts.Budget
	if budget <= 0 {
		budget = GitHubCommentLimit
	}
	size := func(i int) int { return texts.size(i, l.levels[i]) }
	attentionMax := attentionLimit
	head := l.head(attentionMax)
	rest := unchangedLine(l.unchanged, l.unchangedN)
	degraded := false
	// Sizes are weighed rather than the view assembled on every step: a 100-stack diff degrades
	// hundreds of times, and each assembly would copy megabytes.
	const footerReserve = 600 // the "… more stacks" line and the note, with the hint
	total := len(head) + len(rest)
	for i := range l.levels {
		total += size(i)
	}
	for total+footerReserve > budget {
		best := -1
		for i, level := range l.levels {
			if level <= levelOmitted {
				continue
			}
			if best < 0 || level > l.levels[best] || (level == l.levels[best] && size(i) > size(best)) {
				best = i
			}
		}
		degraded = true
		if best < 0 || l.levels[best] == levelSummary {
			last := -1
			for i, level := range l.levels {
				if level > levelOmitted {
					last = i
				}
			}
			if last < 0 {
				if attentionMax == 0 {
					break
				}
				attentionMax /= 2 // the list of dangerous changes itself is too long: shorten it
				total -= len(head)
				head = l.head(attentionMax)
				total += len(head)
				continue
			}
			total -= size(last)
			l.levels[last] = levelOmitted
			continue
		}
		total -= size(best)
		l.levels[best]--
		total += size(best)
	}
	foot := l.footer(degraded)
	if total+len(foot) <= budget {
		return l.assemble(w, texts, head, rest, foot)
	}
	// The attention list alone is too long: keep its head. A byte more than truncateLines keeps
	// is enough for it to cut where it would cut the whole view.
	limit := budget - 200
	prefix := &prefixWriter{limit: max(limit+1, 0)}
	if err := l.assemble(prefix, texts, head, rest, foot); err != nil {
		return err
	}
	cut := truncateLines(prefix.kept.String(), limit)
	_, err := io.WriteString(w, cut+"\n\n… (truncated to fit GitHub's comment size limit)\n")
	return err
}

func (l *markdownLayout) head(attentionMax int) string {
	return "### cdkbot diff: " + mdText(headline(l.counts)) + "\n\n" +
		attentionList(l.attention, l.attentionN, attentionMax)
}

// footer says how many stacks were left out, and where the full diff is when detail was.
func (l *markdownLayout) footer(degraded bool) string {
	var b strings.Builder
	omitted := 0
	for _, level := range l.levels {
		if level == levelOmitted {
			omitted++
		}
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "\n… and %s not shown.\n", plural(omitted, "more stack", "more stacks"))
	}
	if degraded {
		hint := l.opts.FullDiffHint
		if hint == "" {
			hint = "Run `cdkbot diff` locally for the full diff."
		}
		b.WriteString("\n> [!NOTE]\n> Some detail was left out to fit GitHub's comment size limit. " + hint + "\n")
	}
	return b.String()
}

// assemble writes the view: the head, each stack shown at its level, the unchanged stacks' line
// and the footer.
func (l *markdownLayout) assemble(w io.Writer, texts stackTexts, head, rest, foot string) error {
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	for i, level := range l.levels {
		if level == levelOmitted {
			continue
		}
		if err := texts.writeText(w, i, level); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, rest+foot)
	return err
}

// prefixWriter keeps the first limit bytes written to it and drops the rest.
type prefixWriter struct {
	kept  strings.Builder
	limit int
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if room := p.limit - p.kept.Len(); room > 0 {
		p.kept.Write(b[:min(room, len(b))])
	}
	return len(b), nil
}

// attentionItems are what a reviewer must not miss in a top-level stack (its nested stacks
// included): replacements, destroys, orphans and broadened permissions.
func attentionItems(top *cfndiff.StackDiff) []string {
	var items []string
	for _, s := range top.All() {
		for _, res := range s.Diff.Resources {
			switch res.Impact {
			case cfndiff.Replace, cfndiff.MayReplace, cfndiff.Destroy, cfndiff.Orphan:
				items = append(items, fmt.Sprintf("- **%s** %s (%s) in **%s**: %s", res.Impact,
					mdCode(res.LogicalID, 80), mdCode(res.Type(), 80), mdText(stackTitle(s)), mdText(res.Consequence())))
			}
		}
		if sec := s.Diff.Security; sec.Broadened() {
			items = append(items, fmt.Sprintf("- 🔓 **permissions broadened** in **%s**: %s",
				mdText(stackTitle(s)), securityCounts(sec)))
		}
	}
	return items
}

// attentionList is the "needs attention" list across all stacks: its first limit items of the
// given ones, then how many more there are of total.
func attentionList(items []string, total, limit int) string {
	if total == 0 {
		return ""
	}
	more := ""
	if total > limit {
		more = fmt.Sprintf("- … and %d more\n", total-limit)
		items = items[:limit]
	}
	return "**Needs attention**\n\n" + strings.Join(items, "\n") + "\n" + more + "\n"
}

func securityCounts(sec cfndiff.Security) string {
	var parts []string
	add := func(n int, one, many string) {
		if n > 0 {
			parts = append(parts, plural(n, one, many))
		}
	}
	add(len(sec.StatementsAdded), "IAM statement added", "IAM statements added")
	add(len(sec.StatementsRemoved), "IAM statement removed", "IAM statements removed")
	add(len(sec.ManagedPoliciesAdded), "managed policy attached", "managed policies attached")
	add(len(sec.RulesAdded), "security-group rule added", "security-group rules added")
	add(len(sec.RulesRemoved), "security-group rule removed", "security-group rules removed")
	return strings.Join(parts, ", ")
}

func stackCounts(s *cfndiff.StackDiff, opts DiffOptions) string {
	counts := map[cfndiff.Impact]int{}
	assets := 0
	for _, x := range s.All() {
		for _, r := range x.Diff.Resources {
			if opts.FoldAssets && AssetOnly(r) {
				assets++
				continue
			}
			counts[r.Impact]++
		}
	}
	var parts []string
	for _, k := range []struct {
		impact    cfndiff.Impact
		one, many string
	}{
		{cfndiff.Replace, "replacement", "replacements"},
		{cfndiff.MayReplace, "possible replacement", "possible replacements"},
		{cfndiff.Destroy, "destroy", "destroys"},
		{cfndiff.Orphan, "orphan", "orphans"},
		{cfndiff.Create, "create", "creates"},
		{cfndiff.Update, "update", "updates"},
		{cfndiff.Import, "import", "imports"},
	} {
		if n := counts[k.impact]; n > 0 {
			parts = append(parts, plural(n, k.one, k.many))
		}
	}
	if assets > 0 {
		parts = append(parts, plural(assets, "asset changed", "assets changed"))
	}
	if len(parts) == 0 {
		return s.Status.String()
	}
	return strings.Join(parts, " · ")
}

// stackMarkdown renders one top-level stack (with its nested stacks) at a detail level.
func stackMarkdown(s *cfndiff.StackDiff, level int, opts DiffOptions) string {
	title := "<b>" + mdHTML(stackTitle(s)) + "</b>"
	if s.Environment != "" {
		title += " " + mdCode(s.Environment, 80)
	}
	summary := title + " · " + mdText(stackCounts(s, opts))
	if !s.Changed() {
		return "" // counted with the other unchanged stacks, in one line (unchangedLine)
	}
	if level == levelSummary {
		return "- " + summary + " (details omitted for size)\n"
	}
	var b strings.Builder
	b.WriteString("\n<details><summary>" + summary + "</summary>\n\n")
	for i, x := range s.All() {
		if i > 0 {
			if !x.Changed() {
				continue
			}
			b.WriteString("#### Nested stack " + mdCode(x.DisplayName, 120) + "\n\n")
		}
		writeDiffMarkdown(&b, x, level, opts)
	}
	b.WriteString("</details>\n")
	return b.String()
}

func writeDiffMarkdown(b *strings.Builder, s *cfndiff.StackDiff, level int, opts DiffOptions) {
	d := s.Diff
	resources, hidden := visibleResources(d, opts)
	resources, assets := foldAssets(resources, opts.FoldAssets)
	if len(resources) > 0 {
		b.WriteString("| | Resource | Type | Impact |\n|:-:|---|---|---|\n")
		for _, r := range resources {
			name := mdCode(r.LogicalID, 120)
			if p := s.Paths[r.LogicalID]; p != "" {
				name += "<br><sub>" + mdHTML(truncate(p, 200)) + "</sub>"
			}
			impact := "**" + r.Impact.String() + "**"
			if cons := r.Consequence(); cons != "" && r.Impact != cfndiff.Create {
				impact += ": " + mdText(cons)
			}
			if r.UnknownType {
				impact += " (type unknown to the specification)"
			}
			if note := r.VerdictNote(); note != "" {
				impact += " (" + mdText(note) + ")"
			}
			if note := opts.Notes[[2]string{s.ID, r.LogicalID}]; note != "" {
				impact += " · " + mdText(note)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", r.Impact.Symbol(), name, mdCode(r.Type(), 120), impact)
		}
		b.WriteString("\n")
	}
	if len(assets) > 0 {
		fmt.Fprintf(b, "%s: only their asset hashes changed (new code or files to deploy): %s.\n\n",
			plural(len(assets), "asset changed", "assets changed"), namesList(assets, 3))
	}
	if hidden > 0 {
		fmt.Fprintf(b, "<sub>%s with only metadata changes "+
			"(<code>aws&#58;cdk&#58;path</code>, CDK&#39;s analytics resource) "+
			"not shown: they change nothing in AWS.</sub>\n\n", plural(hidden, "resource", "resources"))
	}
	if level >= levelFull {
		writePropertyTable(b, resources)
		writeSections(b, d)
	}
	writeSecurityMarkdown(b, d.Security)
}

func writePropertyTable(b *strings.Builder, resources []*cfndiff.ResourceChange) {
	var rows []string
	for _, r := range resources {
		for _, p := range r.Properties {
			why := ""
			if len(p.ReplacedReferences) > 0 {
				refs := make([]string, len(p.ReplacedReferences))
				for i, ref := range p.ReplacedReferences {
					refs[i] = mdCode(ref, 80)
				}
				why = " (references replaced " + strings.Join(refs, ", ") + ")"
			}
			for _, in := range p.ChangedInputs {
				why += " (reads " + mdCode(in.Name, 100) + ", which changes: " + mdText(in.Why) + ")"
			}
			if p.Unknown {
				why += " (not in the specification)"
			}
			if !p.Changed {
				rows = append(rows, fmt.Sprintf("| %s | %s | %s%s | | <i>value unchanged, resolves anew</i> |",
					mdCode(r.LogicalID, 80), mdCode(p.Name, 80), p.Impact, why))
				continue
			}
			details, more := p.Details()
			for _, dt := range details {
				name := p.Name
				switch {
				case strings.HasPrefix(dt.Path, "["):
					name = p.Name + dt.Path
				case dt.Path != "":
					name = p.Name + "." + dt.Path
				}
				oldText, newText := valuePair(dt.Old, dt.OldPresent, dt.New, dt.NewPresent, valueLimit)
				rows = append(rows, fmt.Sprintf("| %s | %s | %s%s | %s | %s |",
					mdCode(r.LogicalID, 80), mdCode(name, 120), p.Impact, why, mdValue(oldText, 0), mdValue(newText, 0)))
			}
			if more {
				rows = append(rows, fmt.Sprintf("| %s | %s | %s | … | more changes in this property |",
					mdCode(r.LogicalID, 80), mdCode(p.Name, 80), p.Impact))
			}
		}
		for _, o := range r.Other {
			oldText, newText := valuePair(o.Old, o.OldPresent, o.New, o.NewPresent, valueLimit)
			rows = append(rows, fmt.Sprintf("| %s | %s | update | %s | %s |",
				mdCode(r.LogicalID, 80), mdCode(o.Key, 80), mdValue(oldText, 0), mdValue(newText, 0)))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("**Property changes**\n\n| Resource | Property | Impact | Old | New |\n|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n\n")
}

func writeSections(b *strings.Builder, d *cfndiff.TemplateDiff) {
	var rows []string
	for _, sec := range []struct {
		name string
		d    cfndiff.SectionDiff
	}{{"Template", d.Attributes}, {"Parameters", d.Parameters}, {"Outputs", d.Outputs}, {"Conditions", d.Conditions},
		{"Mappings", d.Mappings}, {"Metadata", d.Metadata}, {"Other", d.Unknown}} {
		for _, c := range sec.d.Changes {
			rows = append(rows, fmt.Sprintf("| %s | %s | %s |", sec.name, mdCode(c.Key, 120), c.Kind()))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("**Other template changes**\n\n| Section | Key | Change |\n|---|---|---|\n" +
		strings.Join(rows, "\n") + "\n\n")
}

func writeSecurityMarkdown(b *strings.Builder, sec cfndiff.Security) {
	if len(sec.StatementsAdded)+len(sec.StatementsRemoved) > 0 {
		b.WriteString("**IAM statement changes**\n\n" +
			"| | Effect | Action | Resource | Principal | Condition |\n|:-:|---|---|---|---|---|\n")
		rows := append(statementRows("+", sec.StatementsAdded), statementRows("-", sec.StatementsRemoved)...)
		b.WriteString(strings.Join(rows, "\n") + "\n\n")
	}
	if len(sec.ManagedPoliciesAdded)+len(sec.ManagedPoliciesRemoved) > 0 {
		b.WriteString("**Managed policy changes**\n\n| | Identity | Managed policy |\n|:-:|---|---|\n")
		for _, m := range sec.ManagedPoliciesAdded {
			fmt.Fprintf(b, "| + | %s | %s |\n", mdCode(m.IdentityARN, valueLimit), mdCode(m.ManagedPolicyARN, valueLimit))
		}
		for _, m := range sec.ManagedPoliciesRemoved {
			fmt.Fprintf(b, "| - | %s | %s |\n", mdCode(m.IdentityARN, valueLimit), mdCode(m.ManagedPolicyARN, valueLimit))
		}
		b.WriteString("\n")
	}
	if len(sec.RulesAdded)+len(sec.RulesRemoved) > 0 {
		b.WriteString("**Security group changes**\n\n| | Group | Direction | Protocol | Peer |\n|:-:|---|---|---|---|\n")
		for _, set := range []struct {
			sym   string
			rules []cfndiff.SecurityGroupRule
		}{{"+", sec.RulesAdded}, {"-", sec.RulesRemoved}} {
			for _, r := range set.rules {
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", set.sym, mdCode(r.GroupID, valueLimit), r.Direction,
					mdCode(protocolText(r), 40), mdCode(peerText(r), valueLimit))
			}
		}
		b.WriteString("\n")
	}
}

func statementRows(sym string, sts []cfndiff.Statement) []string {
	var rows []string
	for _, st := range sts {
		if st.Unparseable != "" {
			rows = append(rows, fmt.Sprintf("| %s | | | %s | | |", sym, mdCode(st.Unparseable, valueLimit)))
			continue
		}
		cond := ""
		if st.HasCondition {
			cond = mdValue(valueText(st.Condition, true, valueLimit), 0)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", sym, st.Effect,
			targetsCell(st.Actions), targetsCell(st.Resources), targetsCell(st.Principals), cond))
	}
	sort.Strings(rows)
	return rows
}

func targetsCell(t cfndiff.Targets) string {
	parts := make([]string, len(t.Values))
	for i, v := range t.Values {
		parts[i] = mdValue(v, valueLimit)
	}
	s := strings.Join(parts, "<br>")
	if t.Not {
		s = "NOT " + s
	}
	return s
}

func truncateLines(s string, limit int) string {
	limit = max(limit, 0) // a budget smaller than the note that says what was cut keeps nothing
	if len(s) <= limit {
		return s
	}
	cut := strings.LastIndex(s[:limit], "\n")
	if cut < 0 {
		cut = 0
	}
	return s[:cut]
}

// namesList names up to limit resources, then how many more.
func namesList(rs []*cfndiff.ResourceChange, limit int) string {
	var names []string
	for i, r := range rs {
		if i == limit {
			names = append(names, fmt.Sprintf("and %d more", len(rs)-limit))
			break
		}
		names = append(names, mdCode(r.LogicalID, 80))
	}
	return strings.Join(names, ", ")
}

// unchangedStackNames is how many unchanged stacks a diff names before counting the rest.
const unchangedStackNames = 5

// unchangedLine counts the stacks that do not change in one line, naming the first few: names
// are the first unchangedStackNames of total.
func unchangedLine(names []string, total int) string {
	if total == 0 {
		return ""
	}
	if total > unchangedStackNames {
		names = append(names[:unchangedStackNames:unchangedStackNames], fmt.Sprintf("and %d more", total-unchangedStackNames))
	}
	return fmt.Sprintf("\n%s: %s.\n", plural(total, "stack unchanged", "stacks unchanged"),
		strings.Join(names, ", "))
}
