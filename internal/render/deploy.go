package render

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/deployplan"
)

// deployCounts totals the results.
func deployCounts(r deployplan.Report) map[deployplan.Result]int {
	c := map[deployplan.Result]int{}
	for _, o := range r.Outcomes {
		c[o.Result]++
	}
	return c
}

var deployOrder = []deployplan.Result{
	deployplan.Deployed, deployplan.NoChanges, deployplan.Failed, deployplan.Refused, deployplan.Skipped,
}

func deployTotals(c map[deployplan.Result]int) string {
	var parts []string
	for _, r := range deployOrder {
		if c[r] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[r], r))
		}
	}
	if len(parts) == 0 {
		return "nothing to deploy"
	}
	return strings.Join(parts, ", ")
}

func seconds(o deployplan.Outcome) string {
	if o.Seconds == 0 {
		return ""
	}
	return time.Duration(o.Seconds * float64(time.Second)).Round(100 * time.Millisecond).String()
}

// DeploySummaryText prints one line per stack (result, stack, final status, time), its
// failure or skip reason and outputs indented below, then the totals. Names, reasons and values
// come from the assembly and AWS: each is cleaned, an error of several lines line by line.
func DeploySummaryText(w io.Writer, r deployplan.Report) error {
	ew := &errWriter{w: w}
	width, statusWidth := 0, 0
	for _, o := range r.Outcomes {
		width, statusWidth = max(width, len(Clean(o.Stack))), max(statusWidth, len(Clean(o.Status)))
	}
	for _, o := range r.Outcomes {
		line := strings.TrimRight(fmt.Sprintf("  %-10s  %-*s  %-*s  %s",
			o.Result, width, Clean(o.Stack), statusWidth, Clean(o.Status), seconds(o)), " ")
		ew.printf("%s\n", line)
		switch {
		case o.Error != "":
			ew.printf("      %s\n", strings.ReplaceAll(CleanLines(o.Error), "\n", "\n      "))
		case o.Reason != "":
			ew.printf("      %s\n", Clean(o.Reason))
		}
		for _, c := range o.Causes {
			ew.printf("      cause: %s\n", Clean(c))
		}
		for _, k := range slices.Sorted(maps.Keys(o.Outputs)) {
			ew.printf("      %s = %s\n", Clean(k), Clean(o.Outputs[k]))
		}
	}
	for _, u := range r.Unreviewed {
		ew.printf("  not as reviewed: %s\n", Clean(u))
	}
	total := ""
	if r.Seconds > 0 {
		total = fmt.Sprintf(" in %s", time.Duration(r.Seconds*float64(time.Second)).Round(100*time.Millisecond))
	}
	ew.printf("Deploy: %s%s\n", deployTotals(deployCounts(r)), total)
	return ew.err
}

// DeploySummaryJSON is the machine-readable outcome: {"stacks": [...], "unreviewed": [...]}.
func DeploySummaryJSON(w io.Writer, r deployplan.Report) error {
	out := struct {
		Revision   string               `json:"revision,omitempty"`
		Seconds    float64              `json:"seconds"`
		Stacks     []deployplan.Outcome `json:"stacks"`
		Unreviewed []string             `json:"unreviewed,omitempty"`
		Failed     bool                 `json:"failed"`
	}{r.Revision, r.Seconds, r.Outcomes, r.Unreviewed, r.Failed()}
	if out.Stacks == nil {
		out.Stacks = []deployplan.Outcome{}
	}
	return encodeJSON(w, out, "  ", true)
}

var deployIcon = map[deployplan.Result]string{
	deployplan.Deployed: "✅", deployplan.NoChanges: "➖", deployplan.Failed: "❌",
	deployplan.Refused: "⛔", deployplan.Skipped: "⏭️",
}

// DeployMarkdown is the deploy comment on a merged pull request and the job summary: a
// headline, a table of stacks, failures with their causes, outputs, and the run link. Every
// string from AWS or the assembly is escaped.
func DeployMarkdown(w io.Writer, r deployplan.Report) error {
	ew := &errWriter{w: w}
	if r.Key != "" {
		ew.printf("%s\n", Marker{Tool: "cdkbot", Key: r.Key, HeadSHA: r.Revision}.comment())
	}
	verdict, icon := "deployed", "✅"
	if r.Failed() {
		verdict, icon = "deploy failed", "❌"
	}
	rev := ""
	if r.Revision != "" {
		rev = " " + mdCode(commitid.Short(r.Revision, commitid.GitHub), 12)
	}
	if r.Refused != "" {
		ew.printf("### ⛔ cdkbot did not deploy%s\n\n%s\n\n", rev, mdText(r.Refused))
	} else {
		ew.printf("### %s cdkbot %s%s: %s\n\n", icon, verdict, rev, deployTotals(deployCounts(r)))
	}
	if len(r.Unreviewed) > 0 {
		ew.printf("**Not as reviewed** — what is about to deploy differs from what the pull request's review showed:\n\n")
		for _, u := range r.Unreviewed {
			ew.printf("- %s\n", mdText(u))
		}
		ew.printf("\n")
	}
	if len(r.Outcomes) > 0 {
		ew.printf("| | Stack | Environment | Result | Status | Time |\n|---|---|---|---|---|---|\n")
		for _, o := range r.Outcomes {
			ew.printf("| %s | %s | %s | %s | %s | %s |\n", deployIcon[o.Result],
				mdCode(o.Stack, 200), mdCode(o.Environment, 100), o.Result, statusWord(o.Status), seconds(o))
		}
		ew.printf("\n")
	}
	for _, o := range r.Outcomes {
		if o.Result.OK() {
			continue
		}
		why := o.Error
		if why == "" {
			why = o.Reason
		}
		ew.printf("**%s** %s: %s\n", mdText(o.Stack), o.Result, mdText(truncate(why, 2000)))
		for _, c := range o.Causes {
			ew.printf("- %s\n", mdText(truncate(c, 1000)))
		}
		ew.printf("\n")
	}
	withOutputs := false
	for _, o := range r.Outcomes {
		withOutputs = withOutputs || len(o.Outputs) > 0
	}
	if withOutputs {
		ew.printf("<details><summary>Stack outputs</summary>\n\n| Stack | Output | Value |\n|---|---|---|\n")
		for _, o := range r.Outcomes {
			for _, k := range slices.Sorted(maps.Keys(o.Outputs)) {
				value := "<i>hidden: in the outputs-file of the run (show-outputs: true shows values here)</i>"
				if r.ShowOutputs {
					value = mdCode(o.Outputs[k], 1000)
				}
				ew.printf("| %s | %s | %s |\n", mdCode(o.Stack, 200), mdCode(k, 200), value)
			}
		}
		ew.printf("\n</details>\n\n")
	}
	if r.RunURL != "" {
		ew.printf("[Deployment log](%s)\n", strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(r.RunURL))
	}
	return ew.err
}

// statusWord keeps a CloudFormation status (UPPER_CASE letters) and drops anything else, so it
// needs no escaping.
func statusWord(s string) string {
	return strings.Map(func(r rune) rune {
		if (r >= 'A' && r <= 'Z') || r == '_' {
			return r
		}
		return -1
	}, s)
}
