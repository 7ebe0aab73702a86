package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/semver"
)

var statusSymbol = map[compat.Status]string{compat.Pass: "✓", compat.Warn: "!", compat.Fail: "✗"}

// CompatChecks are the compatibility checks of a change between two assemblies.
type CompatChecks []compat.Check

// Failed reports whether a check failed: the change must not merge as it is.
func (c CompatChecks) Failed() bool { return compat.Worst(c) == compat.Fail }

// CompatText writes compatibility checks for a terminal.
func CompatText(w io.Writer, checks []compat.Check) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range checks {
		fmt.Fprintf(tw, "%s %s\t%s\t%s\n", statusSymbol[c.Status], c.Status, Clean(c.Name), Clean(c.Finding))
		if c.Action != "" {
			fmt.Fprintf(tw, "\t\t→ %s\n", Clean(c.Action))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "compatibility: %s\n", compat.Worst(checks))
	return err
}

// markdownStatus is the sign of a check's status in a comment: GitHub's glyphs.
var markdownStatus = map[compat.Status]string{compat.Pass: "✅", compat.Warn: "⚠️", compat.Fail: "❌"}

// CompatMarkdown writes compatibility checks as the "Compatibility" section of a PR comment: one
// line when every check passes and none asks for anything, else the table of checks.
func CompatMarkdown(w io.Writer, checks []compat.Check) error {
	ew := &errWriter{w: w}
	quiet := true
	for _, c := range checks {
		quiet = quiet && c.Status == compat.Pass && c.Action == ""
	}
	if quiet {
		ew.printf("#### Compatibility: %s · %s\n", compat.Worst(checks), plural(len(checks), "check passes", "checks pass"))
		return ew.err
	}
	ew.printf("#### Compatibility: %s\n\n| | Check | Finding | Action |\n|:-:|---|---|---|\n", compat.Worst(checks))
	for _, c := range checks {
		ew.printf("| %s | %s | %s | %s |\n", markdownStatus[c.Status], mdText(c.Name), mdProse(c.Finding), mdProse(c.Action))
	}
	return ew.err
}

// CompatJSON writes compatibility checks with their worst status for machines:
// {"status": ..., "checks": [...]}.
func CompatJSON(w io.Writer, checks []compat.Check) error {
	return indentedJSON(w, map[string]any{"status": compat.Worst(checks), "checks": checks})
}

// SchemaChanges is the comparison of two JSON Schemas: the changes a reader of the new one
// sees, the bump they require and, when versions were declared, the verdict on them.
type SchemaChanges struct {
	Changes  []compat.Change
	Required semver.Bump
	// Verdict judges the declared version change; nil when none was declared.
	Verdict *compat.Verdict
	// DeclaredOld and DeclaredNew are the declared versions as the user wrote them.
	DeclaredOld, DeclaredNew string
}

// Failed reports whether the declared version change is too small for the changes.
func (s SchemaChanges) Failed() bool { return s.Verdict != nil && s.Verdict.Fails() }

// SchemaChangesText writes one line per change (bump, kind, path, detail), then the required
// bump and the verdict.
func SchemaChangesText(w io.Writer, s SchemaChanges) error {
	// Built whole first so a terminal never shows half a table.
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range s.Changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Bump, c.Kind, Clean(c.Path), Clean(c.Detail))
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "%d change(s); required bump: %s\n", len(s.Changes), s.Required)
	if s.Verdict != nil {
		fmt.Fprintf(&b, "declared %s → %s: %s\n", s.DeclaredOld, s.DeclaredNew, *s.Verdict)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SchemaChangesJSON writes the changes, the required bump and the verdict (null when no
// versions were declared) for machines.
func SchemaChangesJSON(w io.Writer, s SchemaChanges) error {
	type change struct {
		Path   string `json:"path"`
		Kind   string `json:"kind"`
		Bump   string `json:"bump"`
		Detail string `json:"detail"`
	}
	out := struct {
		Changes      []change        `json:"changes"`
		RequiredBump string          `json:"requiredBump"`
		Verdict      *compat.Verdict `json:"verdict"`
	}{Changes: []change{}, RequiredBump: s.Required.String(), Verdict: s.Verdict}
	for _, c := range s.Changes {
		out.Changes = append(out.Changes, change{c.Path, string(c.Kind), c.Bump.String(), c.Detail})
	}
	return indentedJSON(w, out)
}

// SpecMatch is which of some versions a version spec allows.
type SpecMatch struct {
	Spec       string           // as the user wrote it
	Candidates []semver.Version // every version asked about
	Satisfying []semver.Version // those the spec allows, ascending
}

// SpecMatchText writes how many versions satisfy the spec, which, and the latest of them.
func SpecMatchText(w io.Writer, m SpecMatch) error {
	latest := "none"
	if n := len(m.Satisfying); n > 0 {
		latest = m.Satisfying[n-1].String()
	}
	_, err := fmt.Fprintf(w, "spec %q: %d of %d versions satisfy it: %s\nlatest: %s\n",
		m.Spec, len(m.Satisfying), len(m.Candidates), strings.Join(versionStrings(m.Satisfying), " "), latest)
	return err
}

// SpecMatchJSON writes the spec, the satisfying versions and the latest of them (null when
// none) for machines.
func SpecMatchJSON(w io.Writer, m SpecMatch) error {
	out := struct {
		Spec       string   `json:"spec"`
		Satisfying []string `json:"satisfying"`
		Latest     *string  `json:"latest"`
	}{Spec: m.Spec, Satisfying: versionStrings(m.Satisfying)}
	if n := len(m.Satisfying); n > 0 {
		latest := m.Satisfying[n-1].String()
		out.Latest = &latest
	}
	return indentedJSON(w, out)
}

// versionStrings is never nil, so JSON shows an empty list as [].
func versionStrings(vs []semver.Version) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.String())
	}
	return out
}

// Resolution is the best available match for a wanted version, and the rule that found it.
type Resolution struct {
	Wanted   string // as the user wrote it
	Want     semver.Version
	Resolved semver.Version // meaningless when Rule is semver.RuleNone
	Rule     semver.Rule
}

// Failed reports whether no available version matches.
func (r Resolution) Failed() bool { return r.Rule == semver.RuleNone }

// ResolutionText writes the match and its rule to w, or, when nothing matches, why to diag.
// A failure to write that note is not reported: the verdict stands without it.
func ResolutionText(w, diag io.Writer, r Resolution) error {
	if r.Failed() {
		fmt.Fprintf(diag, "no available version matches %s: none has major version %d\n", r.Wanted, r.Want.Major())
		return nil
	}
	_, err := fmt.Fprintf(w, "%s (%s match for %s)\n", r.Resolved, r.Rule, r.Wanted)
	return err
}

// ResolutionJSON writes the wanted version, the resolved one (null when none) and the rule
// for machines.
func ResolutionJSON(w io.Writer, r Resolution) error {
	out := struct {
		Wanted   string      `json:"wanted"`
		Resolved *string     `json:"resolved"`
		Rule     semver.Rule `json:"rule"`
	}{Wanted: r.Wanted, Rule: r.Rule}
	if !r.Failed() {
		s := r.Resolved.String()
		out.Resolved = &s
	}
	return indentedJSON(w, out)
}

// CompatMatrixText writes the compatibility matrix as a table: one combination a line, with
// what happens, what to do and whether cdkbot decides it.
func CompatMatrixText(w io.Writer, rows []compat.MatrixRow) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLI\tframework\tbootstrap\tapp\tmode\twhat happens")
	for _, r := range rows {
		finding := r.Finding
		if r.Action != "" {
			finding += " → " + r.Action
		}
		if r.Decided {
			finding += " [decided by cdkbot]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.CLI, r.Framework, r.Bootstrap, r.App, r.Outcome, finding)
	}
	_ = tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// CompatMatrixJSON writes the compatibility matrix as a list of combinations for machines.
func CompatMatrixJSON(w io.Writer, rows []compat.MatrixRow) error {
	type row struct {
		CLI       string `json:"cli"`
		Framework string `json:"framework"`
		Bootstrap string `json:"bootstrap"`
		App       string `json:"app"`
		Mode      string `json:"mode"`
		Finding   string `json:"finding"`
		Action    string `json:"action,omitempty"`
		Decided   bool   `json:"decidedByCdkbot,omitempty"`
	}
	out := []row{}
	for _, r := range rows {
		out = append(out, row{r.CLI.String(), r.Framework.String(), r.Bootstrap.String(), r.App.String(),
			string(r.Outcome), r.Finding, r.Action, r.Decided})
	}
	return indentedJSON(w, out)
}

// indentedJSON writes v as two-space indented JSON, leaving <, > and & as they are: the
// output is read by people and jq, never embedded in HTML.
func indentedJSON(w io.Writer, v any) error {
	return encodeJSON(w, v, "  ", false)
}
