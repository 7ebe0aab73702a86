package render

import (
	"fmt"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

const levelQuiet = -1 // unchanged: counted with the other unchanged stacks in one line

// wholeDiffMarkdown is DiffMarkdown as it was before it was weighed on sizes: the whole report
// held, each stack re-rendered as it degrades. DiffMarkdown and the stream must give its bytes at
// every budget.
func wholeDiffMarkdown(r DiffReport, opts DiffOptions) string {
	budget := opts.Budget
	if budget <= 0 {
		budget = GitHubCommentLimit
	}
	c := r.Count()
	attentionMax := attentionLimit
	head := "### cdkbot diff: " + mdText(headline(c)) + "\n\n" + wholeAttention(r, attentionMax)
	levels := make([]int, len(r.Stacks))
	parts := make([]string, len(r.Stacks))
	var unchanged []*cfndiff.StackDiff
	for i, s := range r.Stacks {
		levels[i] = levelFull
		parts[i] = stackMarkdown(s, levelFull, opts)
		if !s.Changed() {
			levels[i] = levelQuiet
			unchanged = append(unchanged, s)
		}
	}
	rest := wholeUnchangedLine(unchanged)
	degraded := false
	assemble := func() string {
		var b strings.Builder
		b.WriteString(head)
		omitted := 0
		for i, p := range parts {
			switch levels[i] {
			case levelQuiet:
				continue
			case levelOmitted:
				omitted++
				continue
			}
			b.WriteString(p)
		}
		b.WriteString(rest)
		if omitted > 0 {
			fmt.Fprintf(&b, "\n… and %s not shown.\n", plural(omitted, "more stack", "more stacks"))
		}
		if degraded {
			hint := opts.FullDiffHint
			if hint == "" {
				hint = "Run `cdkbot diff` locally for the full diff."
			}
			b.WriteString("\n> [!NOTE]\n> Some detail was left out to fit GitHub's comment size limit. " + hint + "\n")
		}
		return b.String()
	}
	// Sizes are tracked rather than re-assembled on every step: a 100-stack diff degrades
	// hundreds of times, and each assembly would copy megabytes.
	const footerReserve = 600 // the "… more stacks" line and the note, with the hint
	total := len(head) + len(rest)
	for _, p := range parts {
		total += len(p)
	}
	for total+footerReserve > budget {
		best := -1
		for i := range parts {
			if levels[i] <= levelOmitted {
				continue
			}
			if best < 0 || levels[i] > levels[best] || (levels[i] == levels[best] && len(parts[i]) > len(parts[best])) {
				best = i
			}
		}
		degraded = true
		if best < 0 || levels[best] == levelSummary {
			last := -1
			for i := range parts {
				if levels[i] > levelOmitted {
					last = i
				}
			}
			if last < 0 {
				if attentionMax == 0 {
					break
				}
				attentionMax /= 2 // the list of dangerous changes itself is too long: shorten it
				total -= len(head)
				head = "### cdkbot diff: " + mdText(headline(c)) + "\n\n" + wholeAttention(r, attentionMax)
				total += len(head)
				continue
			}
			levels[last] = levelOmitted
			total -= len(parts[last])
			continue
		}
		levels[best]--
		total -= len(parts[best])
		parts[best] = stackMarkdown(r.Stacks[best], levels[best], opts)
		total += len(parts[best])
	}
	out := assemble()
	if len(out) > budget { // the attention list alone is too long: keep its head
		out = truncateLines(out, budget-200) + "\n\n… (truncated to fit GitHub's comment size limit)\n"
	}
	return out
}

// attention lists what a reviewer must not miss: replacements, destroys, orphans and
// broadened permissions, across all stacks.
func wholeAttention(r DiffReport, limit int) string {
	var items []string
	for _, top := range r.Stacks {
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
	}
	if len(items) == 0 {
		return ""
	}
	more := ""
	if len(items) > limit {
		more = fmt.Sprintf("- … and %d more\n", len(items)-limit)
		items = items[:limit]
	}
	return "**Needs attention**\n\n" + strings.Join(items, "\n") + "\n" + more + "\n"
}

// unchangedLine counts the stacks that do not change in one line, naming the first few.
func wholeUnchangedLine(stacks []*cfndiff.StackDiff) string {
	if len(stacks) == 0 {
		return ""
	}
	var names []string
	for i, s := range stacks {
		if i == unchangedStackNames {
			names = append(names, fmt.Sprintf("and %d more", len(stacks)-unchangedStackNames))
			break
		}
		names = append(names, "<b>"+mdHTML(truncate(stackTitle(s), 120))+"</b>")
	}
	return fmt.Sprintf("\n%s: %s.\n", plural(len(stacks), "stack unchanged", "stacks unchanged"),
		strings.Join(names, ", "))
}
