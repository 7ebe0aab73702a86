package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/apps"
)

// legReview is what the fan-in reads of a leg's review: a forkReviewJSON, decoded the same
// careful way (the leg ran pull request code), or nil when it is not cdkbot's JSON.
func legReview(raw []byte) *forkReviewJSON {
	if len(raw) == 0 {
		return nil
	}
	var r forkReviewJSON
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	return &r
}

func (r *forkReviewJSON) counts() Counts {
	s := r.Diff.Summary
	// A leg's counts are its report's word: a negative one must not cancel another leg's
	// destroys in the sum, nor a huge one overflow it.
	n := func(v int) int { return min(max(v, 0), 1<<30) }
	return Counts{Create: n(s.Create), Update: n(s.Update), Replace: n(s.Replace), MayReplace: n(s.MayReplace),
		Destroy: n(s.Destroy), Orphan: n(s.Orphan), Import: n(s.Import), StacksChanged: n(s.StacksChanged),
		Broadened: s.Broadening}
}

func addCounts(a, b Counts) Counts {
	a.Create += b.Create
	a.Update += b.Update
	a.Replace += b.Replace
	a.MayReplace += b.MayReplace
	a.Destroy += b.Destroy
	a.Orphan += b.Orphan
	a.Import += b.Import
	a.StacksChanged += b.StacksChanged
	a.Broadened = a.Broadened || b.Broadened
	return a
}

// legName is "app · environment" ("app" without one), as written in cdkbot's views.
func legName(s apps.Section) string {
	if s.Environment == "" {
		return s.App
	}
	return s.App + " · " + s.Environment
}

// FanInHeadline is the combined review's one line: the verdict over every app, then what the
// legs found, then what changes over all of them (plain text: the check run's title).
func FanInHeadline(c apps.Combined) string {
	verdict := "✅ safe"
	if c.Failed() {
		verdict = "❌ blocked"
	}
	counted := []string{fmt.Sprintf("%d reviewed", c.Count(apps.Passed)+c.Count(apps.Blocked))}
	if n := c.Count(apps.Blocked); n > 0 {
		counted = append(counted, fmt.Sprintf("%d blocked", n))
	}
	if n := c.Count(apps.Missing) + c.Count(apps.Invalid); n > 0 {
		counted = append(counted, fmt.Sprintf("%d without a valid report", n))
	}
	if n := c.Count(apps.NotRun); n > 0 {
		counted = append(counted, fmt.Sprintf("%d unchanged", n))
	}
	if n := c.Count(apps.Gone); n > 0 {
		counted = append(counted, fmt.Sprintf("%d removed", n))
	}
	parts := []string{verdict, plural(len(c.Sections), "app environment", "app environments") + ": " +
		strings.Join(counted, ", ")}
	var all Counts
	for _, s := range c.Sections {
		if r := legReview(s.Review); r != nil {
			all = addCounts(all, r.counts())
		}
	}
	parts = append(parts, headline(all))
	return Clean(strings.Join(parts, " · "))
}

// fanInMarker is the combined comment's marker: a review marker (what finds the sticky comment)
// with the marker of each reviewed leg, as its review recorded it for the merge deploy. When the
// legs' records do not fit, they are pooled into comments of their own under the combined
// review's key, whose digest the marker keeps (LegsDigest, LegParts), as a large review keeps its
// identities.
type fanInMarker struct {
	Marker
	Combined   bool     `json:"combined"` // a combined review, even with no leg recorded
	Legs       []Marker `json:"legs,omitempty"`
	LegsDigest string   `json:"legsDigest,omitempty"` // IdentitiesDigest of the pooled records
	LegParts   int      `json:"legParts,omitempty"`
}

func (m fanInMarker) comment() string {
	b, _ := json.Marshal(m)
	return MarkerPrefix + hideDashes(string(b)) + " -->"
}

// pooledID names one entry of the pooled records: a leg's record ("leg", its key) or one stack's
// identity ("stack", the leg's key, the stack's id), unambiguously whatever the names hold.
func pooledID(names ...string) string {
	b, _ := json.Marshal(names)
	return string(b)
}

// newFanInMarker records each reviewed leg's marker (its report's record: head commit, blocked,
// every stack's deploy identity) for the deploy of that leg, when c is Verified: the reports came
// from the pull request's own workflow run, so they are what the legs' own comments would have
// said. Otherwise it records none and is flagged unverified, as a fork's review is. Past a quarter
// of budget the records are pooled into comments of their own (FanInIdentityComments), returned.
func newFanInMarker(c apps.Combined, budget int) (fanInMarker, map[string]string) {
	m := fanInMarker{Marker: Marker{Tool: "cdkbot", Key: c.Key, HeadSHA: c.HeadSHA, Blocked: c.Failed(),
		Unverified: !c.Verified}, Combined: true}
	if !c.Verified {
		return m, nil
	}
	for _, s := range c.Sections {
		var leg Marker
		if len(s.Record) == 0 || json.Unmarshal(s.Record, &leg) != nil || leg.Key != s.Key {
			continue
		}
		leg.Blocked = leg.Blocked || s.Outcome == apps.Blocked
		m.Legs = append(m.Legs, leg)
	}
	if len(m.comment()) <= budget/4 {
		return m, nil
	}
	pooled := map[string]string{}
	for _, leg := range m.Legs {
		for id, enc := range leg.Stacks {
			pooled[pooledID("stack", leg.Key, id)] = enc
		}
		leg.Stacks = nil
		b, _ := json.Marshal(leg)
		pooled[pooledID("leg", leg.Key)] = string(b)
	}
	m.Legs = nil
	m.LegsDigest, m.LegParts = IdentitiesDigest(pooled), len(identityParts(m.Key, pooled))
	return m, pooled
}

// FanInIdentityComments are the comments that hold the legs' records when the combined comment
// of budget bytes keeps only their digest (none when they fit its marker).
func FanInIdentityComments(c apps.Combined, budget int) []string {
	if budget <= 0 {
		budget = GitHubCommentLimit
	}
	if _, pooled := newFanInMarker(c, budget); len(pooled) > 0 {
		return identityComments(c.Key, pooled)
	}
	return nil
}

// FanInLegs reads the legs' records a combined review holds for the merge deploy: ok when body
// is a combined review that recorded them (not one flagged unverified, whose legs never count),
// each leg's marker under the leg's key. Pooled records are read back from parts (the bodies of
// cdkbot's comments on the pull request, oldest first) whole, or not at all: an error.
func FanInLegs(body string, parts []string) ([]Marker, bool, error) {
	rest, ok := strings.CutPrefix(body, MarkerPrefix)
	if !ok {
		return nil, false, nil
	}
	end := strings.Index(rest, " -->")
	if end < 0 {
		return nil, false, nil
	}
	var m fanInMarker
	if json.Unmarshal([]byte(rest[:end]), &m) != nil || m.Tool != "cdkbot" || !m.Combined || m.Unverified {
		return nil, false, nil
	}
	if m.LegParts == 0 {
		return m.Legs, true, nil
	}
	pooled, err := JoinIdentityParts(Marker{Key: m.Key, StacksDigest: m.LegsDigest, IdentityParts: m.LegParts}, parts)
	if err != nil {
		return nil, true, err
	}
	legs := map[string]*Marker{}
	for id, enc := range pooled {
		var names []string
		if json.Unmarshal([]byte(id), &names) != nil || len(names) != 2 || names[0] != "leg" {
			continue
		}
		var leg Marker
		if json.Unmarshal([]byte(enc), &leg) != nil || leg.Key != names[1] {
			return nil, true, fmt.Errorf("the record of %s is not one cdkbot wrote", names[1])
		}
		legs[leg.Key] = &leg
	}
	for id, enc := range pooled {
		var names []string
		if json.Unmarshal([]byte(id), &names) != nil || len(names) != 3 || names[0] != "stack" {
			continue
		}
		leg, ok := legs[names[1]]
		if !ok {
			return nil, true, fmt.Errorf("a stack of %s, which has no record", names[1])
		}
		if leg.Stacks == nil {
			leg.Stacks = map[string]string{}
		}
		leg.Stacks[names[2]] = enc
	}
	out := make([]Marker, 0, len(legs))
	for _, k := range slices.Sorted(maps.Keys(legs)) {
		out = append(out, *legs[k])
	}
	return out, true, nil
}

// FanInMarkdown renders the combined review of a fan-out as one comment of at most budget
// bytes: the marker, the headline over all apps, a table with a row per app and environment
// (touched first), then a section per reviewed leg, re-rendered from its review's data (never
// from Markdown it carries: every string escaped, every table bounded). The marker carries each
// reviewed leg's record for the merge deploy (newFanInMarker), flagged unverified unless the
// legs' reports came from the pull request's own workflow run.
func FanInMarkdown(w io.Writer, c apps.Combined, budget int) error {
	if budget <= 0 {
		budget = GitHubCommentLimit
	}
	m, _ := newFanInMarker(c, budget)
	marker := m.comment() + "\n"
	budget -= len(marker)
	var b bytes.Buffer
	b.WriteString("### cdkbot review: " + mdText(FanInHeadline(c)) + "\n\n")
	if len(c.Sections) == 0 {
		b.WriteString("No CDK app in this repository.\n")
	} else {
		b.WriteString("| | App | Environment | Outcome |\n|---|---|---|---|\n")
		rows := boundedRows{budget: budget / 3}
		for _, s := range c.Sections {
			rows.add(fmt.Sprintf("| %s | %s | %s | %s |", s.Outcome.Symbol(), mdSpan(s.App, 120),
				envCell(s.Environment), mdText(legOutcome(s))))
		}
		for _, r := range rows.rows {
			b.WriteString(r + "\n")
		}
		if n := rows.omitted(); n > 0 {
			fmt.Fprintf(&b, "| … | | | %d more: the job summary has them all |\n", n)
		}
		b.WriteString("\n")
	}
	if n := c.Count(apps.Gone); n > 0 {
		// Said above the legs: what a removal leaves running is easy to miss in a row.
		fmt.Fprintf(&b, "> [!WARNING]\n> %s removed by this change, and cdkbot deletes no stack: what %s "+
			"deployed stays deployed (the table says which).\n\n", plural(n, "app environment is", "app environments are"),
			pick(n, "it", "they"))
	}
	for _, n := range c.Notes {
		b.WriteString("> [!NOTE]\n> " + mdText(truncate(n, 400)) + "\n\n")
	}
	left := 0
	for _, s := range c.Sections {
		if s.Outcome == apps.NotRun || s.Outcome == apps.Missing || s.Outcome == apps.Invalid || s.Outcome == apps.Gone {
			continue
		}
		if b.Len() > budget*3/4 {
			left++
			continue
		}
		writeLegSection(&b, s, budget)
	}
	if left > 0 {
		fmt.Fprintf(&b, "%d more reviewed app(s) did not fit: the job summary has them all.\n\n", left)
	}
	out := b.String()
	if len(out) > budget {
		out = truncateLines(out, budget-80) + "\n\n(cut to fit: the job summary has it all)\n"
	}
	_, err := io.WriteString(w, marker+out)
	return err
}

// legOutcome is the table's outcome cell: the leg's verdict and what it changes, or its problem.
func legOutcome(s apps.Section) string {
	switch s.Outcome {
	case apps.NotRun:
		return "unchanged: " + s.Why
	case apps.Gone:
		return "removed: " + s.Why
	case apps.Missing, apps.Invalid:
		return s.Outcome.String() + ": " + s.Problem
	}
	r := legReview(s.Review)
	if r == nil {
		return s.Outcome.String() + ": its review is not cdkbot's JSON"
	}
	out := s.Outcome.String() + " · " + headline(r.counts())
	if s.Status == apps.Added {
		out += " · new app"
	}
	return truncate(out, 300)
}

// writeLegSection writes one reviewed leg: its gates and its changed stacks, bounded.
func writeLegSection(b *bytes.Buffer, s apps.Section, budget int) {
	fmt.Fprintf(b, "#### %s %s\n\n", s.Outcome.Symbol(), mdText(truncate(legName(s), 200)))
	r := legReview(s.Review)
	if r == nil {
		b.WriteString("Its report holds no review cdkbot can read.\n\n")
		return
	}
	blocked := false
	for _, g := range r.Gates {
		if g.Failing() {
			blocked = true
			fmt.Fprintf(b, "> [!CAUTION]\n> **Blocked by %s**: %s.\n\n", mdSpan(g.Name, 40), gateItems(g))
		}
	}
	if s.Outcome == apps.Blocked && !blocked {
		b.WriteString("> [!CAUTION]\n> Its review is blocked.\n\n")
	}
	shown := 0
	for _, st := range r.Diff.Stacks {
		if st.Status == "unchanged" || len(st.Resources) == 0 {
			continue
		}
		if b.Len() > budget*3/4 || shown == 20 {
			b.WriteString("More changed stacks: the leg's job summary has them all.\n\n")
			break
		}
		shown++
		st.writeTable(b, budget*3/4, 50, "leg")
	}
	if shown == 0 {
		b.WriteString("No stack changes.\n\n")
	}
}

// FanInText is the combined review for a terminal: the headline and a line per leg.
func FanInText(w io.Writer, c apps.Combined) error {
	var b strings.Builder
	b.WriteString(FanInHeadline(c) + "\n")
	for _, s := range c.Sections {
		fmt.Fprintf(&b, "%s %s: %s\n", s.Outcome.Symbol(), Clean(legName(s)), Clean(legOutcome(s)))
	}
	for _, n := range c.Notes {
		b.WriteString("note: " + Clean(n) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FanInJSON is the combined review as JSON: the verdict, and each leg's outcome with its counts.
func FanInJSON(w io.Writer, c apps.Combined) error {
	type leg struct {
		apps.Section
		Summary *summaryJSON `json:"summary,omitempty"`
	}
	out := struct {
		apps.Combined
		Failed   bool   `json:"failed"`
		Headline string `json:"headline"`
		Sections []leg  `json:"sections"`
	}{Combined: c, Failed: c.Failed(), Headline: FanInHeadline(c), Sections: []leg{}}
	for _, s := range c.Sections {
		l := leg{Section: s}
		if r := legReview(s.Review); r != nil {
			l.Summary = &r.Diff.Summary
		}
		out.Sections = append(out.Sections, l)
	}
	// Through the JSON views' one escaping: the legs' strings (app directories, file names) are
	// the pull request's, and a job prints this JSON to its log.
	return encodeJSON(w, out, "  ", true)
}

func envCell(env string) string {
	if env == "" {
		return "—"
	}
	return mdSpan(env, 60)
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
