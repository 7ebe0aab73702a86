package render

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cdkbot/cdkbot/internal/aspects"
)

// PolicyJSON writes the policy report (shape documented in the README).
func PolicyJSON(w io.Writer, r *aspects.Report) error {
	return encodeJSON(w, r, "  ", false)
}

func policyCounts(r *aspects.Report) (errors, warnings, suppressed int) {
	for _, v := range r.Violations {
		switch {
		case v.Suppressed:
			suppressed++
		case v.Severity == "error":
			errors++
		default:
			warnings++
		}
	}
	return
}

// PolicyText writes the policy report for a terminal.
func PolicyText(w io.Writer, r *aspects.Report) error {
	ew := &errWriter{w: w}
	errs, warns, supp := policyCounts(r)
	ew.printf("policy: %d error(s), %d warning(s), %d suppressed, %d change(s) by mutating aspects, %d pass(es)\n",
		errs, warns, supp, len(r.Mutations), r.Passes)
	if len(r.Mutations) > 0 {
		ew.printf("\nChanges made by aspects (the templates cdkbot diffs and deploys include them)\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		for _, m := range r.Mutations {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", Clean(m.Aspect), Clean(m.Path), Clean(m.Change))
		}
		_ = tw.Flush()
	}
	if len(r.Violations) > 0 {
		ew.printf("\nViolations\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		for _, v := range r.Violations {
			sev := v.Severity
			if v.Suppressed {
				sev = "suppressed"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s", Clean(sev), Clean(v.Rule), Clean(v.Path), Clean(v.Message))
			if v.Suppressed {
				fmt.Fprintf(tw, " (reason: %s)", Clean(v.Reason))
			} else if v.Existing {
				fmt.Fprint(tw, " (already on the base)")
			}
			fmt.Fprintln(tw)
		}
		_ = tw.Flush()
	}
	for _, wn := range r.Warnings {
		ew.printf("warning: %s\n", Clean(wn))
	}
	return ew.err
}

// PolicyMarkdown writes the "Policy" section of a PR comment: its counts in one line, the changes
// mutating aspects made collapsed under that line, and the violations, if any, in a table.
func PolicyMarkdown(w io.Writer, r *aspects.Report) error {
	ew := &errWriter{w: w}
	errs, warns, supp := policyCounts(r)
	ew.printf("#### Policy: %d error(s), %d warning(s), %d suppressed\n\n", errs, warns, supp)
	if len(r.Mutations) > 0 {
		ew.printf("<details><summary>Mutating aspects changed the templates that are diffed and deployed "+
			"(%s)</summary>\n\n", plural(len(r.Mutations), "change", "changes"))
		ew.printf("| Aspect | Construct | Change |\n|---|---|---|\n")
		for _, m := range r.Mutations {
			ew.printf("| %s | %s | %s |\n", mdCode(m.Aspect, 60), mdCode(m.Path, 200), mdText(m.Change))
		}
		ew.printf("\n</details>\n\n")
	}
	// What the change brings is listed; what the base already had is collapsed under a count.
	var fresh, existing []aspects.Violation
	for _, v := range r.Violations {
		if v.Existing && !v.Suppressed {
			existing = append(existing, v)
		} else {
			fresh = append(fresh, v)
		}
	}
	if len(fresh) > 0 {
		violationTable(ew, fresh)
	}
	if len(existing) > 0 {
		if len(fresh) > 0 {
			ew.printf("\n")
		}
		ew.printf("<details><summary>%s already on the base</summary>\n\n",
			plural(len(existing), "violation", "violations"))
		violationTable(ew, existing)
		ew.printf("\n</details>\n")
	}
	return ew.err
}

func violationTable(ew *errWriter, vs []aspects.Violation) {
	ew.printf("| | Rule | Construct | Finding |\n|:-:|---|---|---|\n")
	for _, v := range vs {
		mark := map[string]string{"error": "❌", "warning": "⚠️"}[v.Severity]
		finding := mdText(v.Message)
		if v.Suppressed {
			mark, finding = "–", "~~"+finding+"~~ suppressed: "+mdText(v.Reason)
		} else if v.Existing {
			finding += " <sub>(already on the base)</sub>"
		}
		ew.printf("| %s | %s | %s | %s |\n", mark, mdCode(v.Rule, 60), mdCode(v.Path, 200), finding)
	}
}
