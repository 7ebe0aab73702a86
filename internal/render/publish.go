package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// PublishSummaryText prints one line per asset × destination and the totals, the way a user
// scans a publish in a terminal or a CI log: state first, then the short asset id, the
// destination and where it went.
func PublishSummaryText(w io.Writer, s publishplan.Summary, dryRun bool) error {
	ew := &errWriter{w: w}
	width, stateWidth := 0, 0
	for _, o := range s.Outcomes {
		width = max(width, len(Clean(o.Destination)))
		stateWidth = max(stateWidth, len(stateLabel(o.State)))
	}
	for _, o := range s.Outcomes {
		line := fmt.Sprintf("  %-*s  %-12s  %-*s  %s",
			stateWidth, stateLabel(o.State), Clean(shortID(o.Asset)), width, Clean(o.Destination), Clean(o.Target))
		if o.Bytes > 0 && o.State == publishplan.Published {
			line += " (" + byteSize(o.Bytes) + ")"
		}
		ew.printf("%s\n", line)
		if o.Error != "" {
			ew.printf("    %s\n", strings.ReplaceAll(CleanLines(o.Error), "\n", "\n    "))
		}
		if o.Note != "" {
			ew.printf("    note: %s\n", Clean(o.Note))
		}
	}
	verb := "Published"
	if dryRun {
		verb = "Dry run (nothing uploaded)"
	}
	ew.printf("%s\n", verb+": "+PublishTotals(s))
	if stores := s.ByStore(); len(stores) > 1 {
		for _, st := range stores {
			ew.printf("  %s: %s\n", st.Store, totals(st.Counts))
		}
	}
	return ew.err
}

// PublishTotals reads "3 published, 1 present" for a summary.
func PublishTotals(s publishplan.Summary) string {
	all := map[publishplan.State]int{}
	for _, o := range s.Outcomes {
		all[o.State]++
	}
	return totals(all)
}

// totals reads "3 published, 1 present" in a fixed order of states.
func totals(counts map[publishplan.State]int) string {
	var parts []string
	for _, st := range []publishplan.State{
		publishplan.Published, publishplan.Missing, publishplan.Present, publishplan.Failed, publishplan.Skipped,
	} {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, stateLabel(st)))
		}
	}
	if len(parts) == 0 {
		return "nothing to publish"
	}
	return strings.Join(parts, ", ")
}

func stateLabel(st publishplan.State) string {
	switch st {
	case publishplan.Present:
		return "present"
	case publishplan.Missing:
		return "would publish"
	}
	return string(st)
}

// PublishSummaryJSON is the documented JSON shape of `cdkbot publish --format json`.
func PublishSummaryJSON(w io.Writer, s publishplan.Summary, dryRun bool) error {
	out := struct {
		DryRun   bool                      `json:"dryRun"`
		Outcomes []publishplan.Outcome     `json:"outcomes"`
		Totals   map[string]int            `json:"totals"`
		ByStore  []publishplan.StoreTotals `json:"byStore"`
	}{DryRun: dryRun, Outcomes: s.Outcomes, Totals: map[string]int{}, ByStore: s.ByStore()}
	if out.Outcomes == nil {
		out.Outcomes = []publishplan.Outcome{}
	}
	for _, o := range s.Outcomes {
		out.Totals[string(o.State)]++
	}
	return encodeJSON(w, out, "  ", true)
}
