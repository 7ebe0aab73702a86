package render

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cdkbot/cdkbot/internal/compat"
)

var statusSymbol = map[compat.Status]string{compat.Pass: "✓", compat.Warn: "!", compat.Fail: "✗"}

// CompatText writes compatibility checks for a terminal.
func CompatText(w io.Writer, checks []compat.Check) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range checks {
		fmt.Fprintf(tw, "%s %s\t%s\t%s\n", statusSymbol[c.Status], c.Status, c.Name, c.Finding)
		if c.Action != "" {
			fmt.Fprintf(tw, "\t\t→ %s\n", c.Action)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "compatibility: %s\n", compat.Worst(checks))
	return err
}

// CompatMarkdown writes compatibility checks as the "Compatibility" section of a PR comment.
func CompatMarkdown(w io.Writer, checks []compat.Check) error {
	ew := &errWriter{w: w}
	ew.printf("#### Compatibility: %s\n\n| | Check | Finding | Action |\n|:-:|---|---|---|\n", compat.Worst(checks))
	for _, c := range checks {
		ew.printf("| %s | %s | %s | %s |\n", statusSymbol[c.Status], mdText(c.Name), mdText(c.Finding), mdText(c.Action))
	}
	return ew.err
}
