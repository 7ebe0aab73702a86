package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/review"
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
		fmt.Fprintf(&b, "> [!IMPORTANT]\n> %s runs something other than the base: deploying the base would also change what is below "+
			"(a change made outside CloudFormation's template, a failed deploy, or a deploy from another branch).\n", mdCode(d.Stack, 120))
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
			fmt.Fprintf(&b, "  deployed: %s runs something other than the base; deploying the base would also change:\n", d.Stack)
			if err := DiffText(&b, DiffReport{Stacks: []*cfndiff.StackDiff{d.Diff}}, opts); err != nil {
				return err
			}
		case review.DeployedNotDeployed:
			fmt.Fprintf(&b, "  deployed: %s is not deployed yet\n", d.Stack)
		case review.DeployedUnknown:
			fmt.Fprintf(&b, "  deployed: %s could not be read: %s\n", d.Stack, Clean(d.Note))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}
