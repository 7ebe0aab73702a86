package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/stackstate"
)

// deployedMarkdown says, for the stacks whose running template is not the base, what differs:
// the diff from what runs to the base is what the base's next deploy changes too. Stacks that
// run the base say nothing. Bounded by budget: past it, the diffs shrink to their summary line.
func deployedMarkdown(ds []review.Deployed, budget int) string {
	var b strings.Builder
	var missing, unknown []string
	var differs []review.Deployed
	for _, d := range ds {
		switch d.State {
		case review.DeployedDiffers:
			differs = append(differs, d)
		case review.DeployedNotDeployed:
			missing = append(missing, mdCode(d.Stack, 120))
		case review.DeployedUnknown:
			unknown = append(unknown, mdCode(d.Stack, 120)+" ("+mdText(truncate(d.Note, 300))+")")
		}
	}
	if len(differs)+len(missing)+len(unknown) == 0 {
		return ""
	}
	b.WriteString("#### What runs\n\n")
	for _, d := range differs {
		fmt.Fprintf(&b, "> [!IMPORTANT]\n> %s runs something other than the base: "+
			"deploying the base would also change what is below (a change made outside CloudFormation's template, "+
			"a failed deploy, or a deploy from another branch).\n", mdCode(d.Stack, 120))
		level := levelFull
		if b.Len() > budget/2 {
			level = levelSummary
		}
		b.WriteString(stackMarkdown(d.Diff, level, DiffOptions{Budget: budget}) + "\n")
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "Not deployed yet: %s.\n\n", strings.Join(missing, ", "))
	}
	if len(unknown) > 0 {
		fmt.Fprintf(&b, "Could not read what is deployed: %s.\n\n", strings.Join(unknown, "; "))
	}
	return b.String()
}

// deployedText is deployedMarkdown for a terminal.
func deployedText(w io.Writer, ds []review.Deployed, opts DiffOptions) error {
	var b bytes.Buffer
	for _, d := range ds {
		switch d.State {
		case review.DeployedDiffers:
			fmt.Fprintf(&b, "  deployed: %s runs something other than the base; "+
				"deploying the base would also change:\n", Clean(d.Stack))
			if err := DiffText(&b, DiffReport{Stacks: []*cfndiff.StackDiff{d.Diff}}, opts); err != nil {
				return err
			}
		case review.DeployedNotDeployed:
			fmt.Fprintf(&b, "  deployed: %s is not deployed yet\n", Clean(d.Stack))
		case review.DeployedUnknown:
			fmt.Fprintf(&b, "  deployed: %s could not be read: %s\n", Clean(d.Stack), Clean(d.Note))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// driftMarkdown lists the drifted resources of the stacks the change touches, one row per
// property that is not what the stack set. Bounded by budget.
func driftMarkdown(ds []review.StackDrift, budget int) string {
	if len(ds) == 0 {
		return ""
	}
	rows := boundedRows{budget: budget}
	for _, sd := range ds {
		for _, r := range sd.Resources {
			diffs := r.Differences
			if len(diffs) == 0 {
				diffs = []stackstate.PropertyDifference{{}}
			}
			for _, p := range diffs {
				rows.add(fmt.Sprintf("| %s | %s | %s | %s | %s | %s |",
					mdCode(sd.Stack, 80), mdCode(r.LogicalID, 80), strings.ToLower(mdText(r.Status)),
					mdCode(p.Path, 80), mdCode(truncate(p.Expected, 200), 0), mdCode(truncate(p.Actual, 200), 0)))
			}
		}
	}
	more := ""
	if n := rows.omitted(); n > 0 {
		more = fmt.Sprintf("\n%d more difference(s) in the job summary.\n", n)
	}
	return "#### Drift\n\n> [!WARNING]\n> Resources of stacks this change deploys were changed outside CloudFormation: " +
		"CloudFormation changes only what this deploy's change set touches, so drifted values it does not touch " +
		"keep their outside value (the deploy does not set them back); a resource it updates gets the template's " +
		"values, and one deleted outside CloudFormation fails the deploy where the change touches it.\n\n" +
		"| Stack | Resource | Drift | Property | Stack set | Is now |\n|---|---|---|---|---|---|\n" +
		strings.Join(rows.rows, "\n") + "\n" + more + "\n"
}

// driftText is driftMarkdown for a terminal.
func driftText(w io.Writer, ds []review.StackDrift) error {
	var b bytes.Buffer
	for _, sd := range ds {
		for _, r := range sd.Resources {
			fmt.Fprintf(&b, "  drift: %s in %s %s\n", Clean(r.LogicalID), Clean(sd.Stack), Clean(r.Summary()))
			for _, p := range r.Differences {
				fmt.Fprintf(&b, "      %s: stack set %s, is now %s\n",
					Clean(p.Path), Clean(truncate(p.Expected, 200)), Clean(truncate(p.Actual, 200)))
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}
