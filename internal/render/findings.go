package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/findings"
	"github.com/cdkbot/cdkbot/internal/review"
)

// Views of what the app reported while it synthesized (validation report, annotations) and of the
// likely moves of a review. Everything in a finding or a move is the app's text: escaped here.

// findingsHeadline are the headline's words for the app's findings and the likely moves: new
// errors (those the validation-error gate counts) and new warnings (existing ones are the
// base's), and moves, whose hint saves a resource.
func findingsHeadline(r *review.Report) []string {
	var parts []string
	c := r.Findings.Counts()
	errs := 0
	if r.Findings != nil {
		for _, f := range r.Findings.Findings {
			if f.Severity.Blocks() && f.Status != findings.Existing {
				errs++
			}
		}
	}
	if errs > 0 {
		parts = append(parts, plural(errs, "new validation error", "new validation errors"))
	}
	if n := c[findings.Warning].New; n > 0 {
		parts = append(parts, plural(n, "new app warning", "new app warnings"))
	}
	if n := len(r.Moves); n > 0 {
		parts = append(parts, plural(n, "likely move", "likely moves"))
	}
	return parts
}

// findingsCounts is "2 errors (2 new) · 4 warnings (3 new) · 1 info".
func findingsCounts(r *findings.Report) string {
	c := r.Counts()
	var parts []string
	for _, k := range []struct {
		sev       []findings.Severity
		one, many string
	}{
		{[]findings.Severity{findings.Fatal, findings.Error}, "error", "errors"},
		{[]findings.Severity{findings.Warning}, "warning", "warnings"},
		{[]findings.Severity{findings.Info}, "info", "info"},
	} {
		var n findings.Count
		for _, s := range k.sev {
			n.All += c[s].All
			n.New += c[s].New
		}
		if n.All == 0 {
			continue
		}
		p := plural(n.All, k.one, k.many)
		if n.New > 0 && n.New < n.All {
			p += fmt.Sprintf(" (%d new)", n.New)
		} else if n.New > 0 {
			p += " (new)"
		}
		parts = append(parts, p)
	}
	if len(r.Findings) > 0 && !slices.ContainsFunc(r.Findings, func(f findings.Finding) bool {
		return f.Status != findings.Existing
	}) {
		parts = append(parts, "all already on the base")
	}
	if n := len(r.Failures); n > 0 {
		parts = append(parts, plural(n, "plugin failed", "plugins failed"))
	}
	if r.Problem != "" {
		parts = append(parts, "report unreadable")
	}
	if len(parts) == 0 {
		return "none open"
	}
	return strings.Join(parts, " · ")
}

var severityMark = map[findings.Severity]string{
	findings.Fatal: "❌", findings.Error: "❌", findings.Warning: "⚠", findings.Info: "ℹ",
}

// findingRowLimit bounds one finding's message in a table cell; failuresShown is how many failed
// plugins the section names.
const (
	findingRowLimit = 400
	failuresShown   = 3
)

// findingsMarkdown is the collapsed "Findings from the app" section within budget bytes: one
// row per finding, new ones first marked, the rest counted when they do not fit.
func findingsMarkdown(r *findings.Report, budget int) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary><b>Findings from the app</b>: %s</summary>\n\n", findingsCounts(r))
	b.WriteString("What the app reported while it synthesized: aws-cdk-lib's validation report " +
		"(template validation, validation plugins) and the warnings and info of its constructs' annotations " +
		"(cdk-nag, `Annotations.of(…)`).\n\n")
	if r.Problem != "" {
		fmt.Fprintf(&b, "> [!WARNING]\n> %s\n\n", mdText(truncate(r.Problem, 1000)))
	}
	if n := len(r.Failures); n > 0 {
		whys := make([]string, 0, failuresShown)
		for _, why := range r.Failures[:min(n, failuresShown)] {
			whys = append(whys, mdText(truncate(why, 300)))
		}
		more := ""
		if n > failuresShown {
			more = fmt.Sprintf(" and %d more", n-failuresShown)
		}
		fmt.Fprintf(&b, "> [!WARNING]\n> %s, so %s not checked: %s%s.\n\n",
			plural(n, "validation plugin did not run", "validation plugins did not run"),
			map[bool]string{true: "its rules were", false: "their rules were"}[n == 1], strings.Join(whys, "; "), more)
	}
	rows := boundedRows{budget: budget - b.Len() - 600}
	notCompared := false
	for _, f := range ordered(r.Findings) {
		notCompared = notCompared || f.Status == findings.NotCompared
		rows.add(findingRow(f))
	}
	if len(rows.rows) > 0 {
		b.WriteString("| | Source | Rule | Construct | Finding |\n|:-:|---|---|---|---|\n")
		b.WriteString(strings.Join(rows.rows, "\n") + "\n")
	}
	if n := rows.omitted() + r.Omitted; n > 0 {
		fmt.Fprintf(&b, "\n%s more: the job summary and the report artifact list them all.\n",
			plural(n, "finding", "findings"))
	}
	if notCompared {
		fmt.Fprintf(&b, "\n%s runs on the head only (cdkbot synthesizes the base without it), so its findings "+
			"are not compared with the base.\n", mdText(findings.TemplateValidator))
	}
	if r.Suppressed > 0 {
		fmt.Fprintf(&b, "\n%s acknowledged by the app.\n", plural(r.Suppressed, "violation", "violations"))
	}
	b.WriteString("\n</details>\n\n")
	return b.String()
}

// ordered puts new findings first, then those not compared, then the base's, keeping the
// report's order (worst first) within each.
func ordered(fs []findings.Finding) []findings.Finding {
	out := make([]findings.Finding, 0, len(fs))
	for _, st := range []findings.Status{findings.New, findings.NotCompared, findings.Existing} {
		for _, f := range fs {
			if f.Status == st {
				out = append(out, f)
			}
		}
	}
	return out
}

func findingRow(f findings.Finding) string {
	source := "annotation"
	if f.Source == findings.Validation {
		source = mdText(truncate(f.Plugin, 80))
	}
	rule := ""
	if f.Rule != "" {
		rule = mdCode(f.Rule, 80)
	}
	where := ""
	if f.Path != "" {
		where = mdCode(f.Path, 200)
	} else if f.LogicalID != "" {
		where = mdCode(f.LogicalID, 200)
	}
	if f.Stack != "" {
		where += "<br><sub>" + mdHTML(truncate(f.Stack, 120)) + "</sub>"
	}
	text := mdText(truncate(f.Message, findingRowLimit))
	switch f.Status {
	case findings.New:
		text = "**new** · " + text
	case findings.Existing:
		text += " <sub>(already on the base)</sub>"
	}
	if f.Fix != "" {
		text += "<br>Fix: " + mdText(truncate(f.Fix, 200))
	}
	mark := severityMark[f.Severity]
	if f.Custom != "" {
		mark += " " + mdText(truncate(f.Custom, 20))
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s |", mark, source, rule, where, text)
}

// movesLimit bounds the moves a comment lists.
const movesLimit = 10

// movesMarkdown is the hint for resources the change most likely moves within budget bytes: one
// tip naming both ends of each, and what `cdk refactor` does about it.
func movesMarkdown(moves []review.Move, budget int) string {
	if len(moves) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("> [!TIP]\n> **Likely moved, not replaced**: the same type and properties under a new logical id " +
		"(a renamed construct, or one moved to another stack). Deployed as is, CloudFormation creates a new resource " +
		"and deletes or orphans the old one. `cdk refactor` moves it instead, keeping the resource and its data: run " +
		"it before deploying (aws-cdk#8120).\n")
	for i, m := range moves {
		line := fmt.Sprintf("> - %s in **%s** (%s) → %s in **%s**: %s\n", mdCode(m.From.LogicalID, 120),
			mdText(truncate(m.From.Stack, 120)), mdText(m.From.Impact), mdCode(m.To.LogicalID, 120),
			mdText(truncate(m.To.Stack, 120)), mdCode(m.Type, 80))
		if i == movesLimit || b.Len()+len(line) > budget-100 {
			fmt.Fprintf(&b, "> - … and %d more\n", len(moves)-i)
			break
		}
		b.WriteString(line)
	}
	b.WriteString("\n")
	return b.String()
}

// findingsTextLimit bounds the findings a terminal lists.
const findingsTextLimit = 50

// findingsText writes the moves and the app's findings for a terminal, every value cleaned.
func findingsText(w io.Writer, r *review.Report) error {
	ew := &errWriter{w: w}
	for _, m := range r.Moves {
		ew.printf("  ↪ likely move: %s in %s (%s) → %s in %s (%s); `cdk refactor` keeps the resource\n",
			Clean(m.From.LogicalID), Clean(m.From.Stack), Clean(m.From.Impact), Clean(m.To.LogicalID),
			Clean(m.To.Stack), Clean(m.Type))
	}
	f := r.Findings
	if f == nil {
		return ew.err
	}
	ew.printf("\nfindings from the app: %s\n", findingsCounts(f))
	if f.Problem != "" {
		ew.printf("  ! %s\n", Clean(f.Problem))
	}
	for i, why := range f.Failures {
		if i == findingsTextLimit {
			ew.printf("  … and %d more plugins that did not run\n", len(f.Failures)-i)
			break
		}
		ew.printf("  ! a validation plugin did not run: %s\n", Clean(why))
	}
	for i, x := range ordered(f.Findings) {
		if i == findingsTextLimit {
			ew.printf("  … and %d more\n", len(f.Findings)-findingsTextLimit)
			break
		}
		status := ""
		switch x.Status {
		case findings.New:
			status = " (new)"
		case findings.Existing:
			status = " (already on the base)"
		}
		ew.printf("  %s %s%s\n", x.Severity.Symbol(), Clean(x.Describe()), status)
	}
	return ew.err
}

// moveNotes are the diff's words for both ends of each likely move, so the two rows read as one
// move rather than two unrelated changes.
func moveNotes(moves []review.Move) map[[2]string]string {
	if len(moves) == 0 {
		return nil
	}
	out := map[[2]string]string{}
	for _, m := range moves {
		out[[2]string{m.From.Stack, m.From.LogicalID}] = "likely moved to " + m.To.LogicalID + " in " + m.To.Stack +
			"; cdk refactor keeps it"
		out[[2]string{m.To.Stack, m.To.LogicalID}] = "likely " + m.From.LogicalID + " of " + m.From.Stack + ", moved here"
	}
	return out
}
