package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/review"
)

// forkReviewJSON is what a fork's report file carries of its review (ReviewJSON's shape). All
// of it was produced where the pull request's author could change anything.
type forkReviewJSON struct {
	Gates         []review.Gate     `json:"gates"`
	Compatibility []compat.Check    `json:"compatibility"`
	Failed        bool              `json:"failed"`
	Templates     map[string]string `json:"templateHashes"`
	Diff          struct {
		Stacks  []forkStackJSON `json:"stacks"`
		Summary summaryJSON     `json:"summary"`
	} `json:"diff"`
}

// forkStackJSON is the part of a stack's diff the re-rendered comment shows.
type forkStackJSON struct {
	DisplayName string `json:"displayName"`
	Environment string `json:"environment"`
	Status      string `json:"status"`
	Resources   []struct {
		LogicalID string  `json:"logicalId"`
		Impact    string  `json:"impact"`
		OldType   *string `json:"oldType"`
		NewType   *string `json:"newType"`
	} `json:"resources"`
}

// writeTable writes the stack's resources as an escaped table, at most rows of them and while b
// stays within limit bytes; the rest is said to be in the job summary of where it was reviewed
// (the fork's, the leg's).
func (s forkStackJSON) writeTable(b *bytes.Buffer, limit, rows int, where string) {
	fmt.Fprintf(b, "**%s** %s · %s\n\n| Resource | Type | Impact |\n|---|---|---|\n",
		mdText(truncate(s.DisplayName, 200)), mdCode(s.Environment, 100), mdText(truncate(s.Status, 40)))
	for i, res := range s.Resources {
		if b.Len() > limit || i == rows {
			fmt.Fprintf(b, "| … | | the rest is in the %s's job summary |\n", where)
			break
		}
		typ := ""
		if res.NewType != nil {
			typ = *res.NewType
		} else if res.OldType != nil {
			typ = *res.OldType
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdCode(res.LogicalID, 120), mdCode(typ, 80), mdText(truncate(res.Impact, 40)))
	}
	b.WriteString("\n")
}

// ForkReviewMarkdown re-renders a fork's review from the structured data of its report file,
// never from the Markdown the file carries: every string is escaped, every table bounded, and the
// marker is written here, flagged unverified, so the deploy flow does not take the fork's word
// for what was reviewed.
func ForkReviewMarkdown(w io.Writer, raw []byte, key, headSHA string, budget int) error {
	var r forkReviewJSON
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("the report's review is not cdkbot's JSON: %w", err)
	}
	if budget <= 0 {
		budget = GitHubCommentLimit
	}
	// The marker is written whole and first, outside the budgeted body: only the body is cut.
	marker := Marker{Tool: "cdkbot", Key: key, HeadSHA: headSHA, Unverified: true}.comment() + "\n"
	budget -= len(marker)
	var b bytes.Buffer
	c := Counts{Create: r.Diff.Summary.Create, Update: r.Diff.Summary.Update,
		Replace: r.Diff.Summary.Replace, MayReplace: r.Diff.Summary.MayReplace,
		Destroy: r.Diff.Summary.Destroy, Orphan: r.Diff.Summary.Orphan, Import: r.Diff.Summary.Import,
		StacksChanged: r.Diff.Summary.StacksChanged, Broadened: r.Diff.Summary.Broadening}
	verdict := verdictOf(false, r.Gates, c.StacksChanged > 0)
	if r.Failed && verdict < NeedsApproval {
		verdict = Blocked // failed for a reason the gates do not show (the base)
	}
	b.WriteString(verdictLine(verdict) + "\n")
	if c.StacksChanged > 0 {
		b.WriteString(mdText(truncate(headline(c), 400)) + "\n\n")
	}
	b.WriteString(provenance(&review.Report{HeadSHA: headSHA}, Links{}))
	b.WriteString("> [!NOTE]\n> This pull request comes from a fork: its review ran in the fork's workflow " +
		"and was re-rendered here from the data it reported. " +
		"cdkbot cannot verify that data, so a deploy does not count this review as reviewed.\n\n")
	for _, g := range r.Gates {
		if g.Failing() {
			fmt.Fprintf(&b, "> [!CAUTION]\n> **Blocked by %s**: %s.\n\n", mdSpan(g.Name, 40), gateItems(g))
		}
	}
	for i, s := range r.Diff.Stacks {
		if s.Status == "unchanged" || len(s.Resources) == 0 {
			continue
		}
		if b.Len() > budget*3/4 {
			more := 0
			for _, s := range r.Diff.Stacks[i:] {
				if s.Status != "unchanged" && len(s.Resources) > 0 {
					more++
				}
			}
			fmt.Fprintf(&b, "%d more changed stack(s): the fork's job summary has them all.\n\n", more)
			break
		}
		s.writeTable(&b, budget*3/4, len(s.Resources), "fork")
	}
	if len(r.Compatibility) > 0 && b.Len() < budget*3/4 {
		if err := CompatMarkdown(&b, r.Compatibility); err != nil {
			return err
		}
	}
	out := b.String()
	if len(out) > budget {
		out = truncateLines(out, budget-80) + "\n\n(cut to fit: the fork's job summary has it all)\n"
	}
	_, err := io.WriteString(w, marker+out)
	return err
}
