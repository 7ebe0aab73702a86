package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/resourcespec"
	"github.com/cdkbot/cdkbot/internal/review"
)

// MarkerPrefix starts the hidden comment that identifies cdkbot's sticky comment and carries
// what the deploy flow needs to know about the review.
const MarkerPrefix = "<!-- cdkbot:"

// Marker is the JSON inside the hidden comment.
type Marker struct {
	Tool     string `json:"tool"`
	Key      string `json:"key"`
	HeadSHA  string `json:"headSha,omitempty"`
	BaseSHA  string `json:"baseSha,omitempty"`  // the commit the review compared with
	MergeSHA string `json:"mergeSha,omitempty"` // the commit reviewed, when it is GitHub's test merge commit
	// Templates are template hashes, as markers recorded them before deploy identities; read
	// only, to say that such a review must be made again.
	Templates map[string]string `json:"templates,omitempty"`
	// Stacks is each head stack's deploy identity (review.Identity's encoding), by qualified id:
	// what the merge deploy compares with. When they would not fit the comment's budget they are
	// left out, and StacksDigest and IdentityParts say where they are.
	Stacks map[string]string `json:"stacks,omitempty"`
	// StacksDigest, when Stacks is left out, is IdentitiesDigest of every stack's identity; they are
	// in IdentityParts comments of their own on the pull request (IdentityComments), which the
	// deploy reads back (JoinIdentityParts) and checks against this digest.
	StacksDigest  string `json:"stacksDigest,omitempty"`
	IdentityParts int    `json:"identityParts,omitempty"`
	// Blocked is true when the review's gates failed and no approval covered them: the merge
	// deploy does not deploy what it showed.
	Blocked bool `json:"blocked,omitempty"`
	// Shown are the gate items (review.ItemDigest) the review asked approvers to approve: an
	// approval given after this review was posted covers these.
	Shown []string `json:"shown,omitempty"`
	// Approvals is the ledger of the label approvals this review counted, each with the items
	// it covers: a later review keeps each approval to what its approver saw.
	Approvals []review.Approval `json:"approvals,omitempty"`
	// Unverified marks a review cdkbot re-rendered from a fork's report: the deploy flow does not
	// take it as what was reviewed.
	Unverified bool `json:"unverified,omitempty"`
	// HeadAssembly is "given" when the head assembly was handed to cdkbot instead of synthesized
	// by it from the revision.
	HeadAssembly string `json:"headAssembly,omitempty"`
}

// comment renders m as the hidden comment a body starts with. "--" cannot appear inside an HTML
// comment, so it is written as JSON's own escape, which ParseMarker reads back as "--".
func (m Marker) comment() string {
	b, _ := json.Marshal(m)
	return MarkerPrefix + hideDashes(string(b)) + " -->"
}

// hideDashes writes JSON's "--" as its own escape, which cannot end an HTML comment; the ids in
// it are shown as the JSON views show them (cleanJSON), for a comment printed to a terminal.
func hideDashes(js string) string {
	return strings.ReplaceAll(string(cleanJSON([]byte(js))), "--", `\u002d\u002d`)
}

// MarkerComment renders the hidden marker of a report, with every stack's identity in it.
func MarkerComment(r *review.Report) string { return markerOf(r).comment() }

func markerOf(r *review.Report) Marker {
	m := Marker{Tool: "cdkbot", Key: r.Key, HeadSHA: r.HeadSHA, BaseSHA: r.BaseSHA, MergeSHA: r.MergeSHA,
		Stacks: review.IdentityStrings(r.Identity), Blocked: r.Failed(), Shown: review.ShownToken(r.Shown())}
	for _, a := range r.Approvals {
		if a.Covers != nil { // approvals bound to what their approver saw; the others need no ledger
			a.Covers = review.ShownToken(a.Covers)
			m.Approvals = append(m.Approvals, a)
		}
	}
	if r.HeadGiven {
		m.HeadAssembly = "given"
	}
	return m
}

// reviewMarker is the marker a comment of budget bytes starts with: every stack's identity in
// it while the marker takes at most an eighth of the budget; past that, their digest, the
// identities going to comments of their own (IdentityComments). Everything else a marker holds
// is bounded (64 item digests or a set token, one ledger entry per label approval), so the marker
// fits every budget whole: it is never cut.
func reviewMarker(r *review.Report, budget int) Marker {
	m := markerOf(r)
	if len(m.Stacks) == 0 || len(m.comment()) <= budget/8 {
		return m
	}
	m.StacksDigest, m.IdentityParts = IdentitiesDigest(m.Stacks), len(identityParts(m.Key, m.Stacks))
	m.Stacks = nil
	return m
}

// ReviewHeadline is the one line a reviewer acts on, as plain text (the check run's title): the
// verdict first, then what it is about, the names in it cleaned.
func ReviewHeadline(r *review.Report) string {
	v := ReviewVerdict(r)
	h := v.Glyph() + " " + v.String()
	if d := reviewDetails(r); d != "" {
		h += " · " + Clean(d)
	}
	return h
}

// reviewHeadline is what the change does, on one line: the details after a verdict.
func reviewHeadline(r *review.Report) string { return strings.Join(headlineParts(r), " · ") }

// terminalHeadline is the terminal's first line, the verdict first as in the comment (its word,
// without the glyph, which terminals draw at different widths): "needs approval · 2 stacks change".
func terminalHeadline(r *review.Report) string {
	v := ReviewVerdict(r)
	parts := headlineParts(r)
	if v == NoChanges && len(parts) > 0 && parts[0] == v.String() {
		parts = parts[1:]
	}
	return strings.Join(append([]string{v.String()}, parts...), " · ")
}

// headlineParts are what a review is about: what changes, what is dangerous, what else blocks.
func headlineParts(r *review.Report) []string {
	d := DiffReport{Stacks: r.Stacks}
	c := d.Count()
	parts := []string{}
	if c.StacksChanged == 0 {
		parts = append(parts, "no changes")
	} else {
		parts = append(parts, plural(c.StacksChanged, "stack changes", "stacks change"))
	}
	if c.Replace > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s)",
			plural(c.Replace, "replacement", "replacements"), replacementCause(r.Stacks)))
	}
	if c.Destroy > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s)",
			plural(c.Destroy, "destroy", "destroys"), firstOf(r.Stacks, cfndiff.Destroy)))
	}
	if c.Broadened {
		parts = append(parts, headlineFinding(r.Stacks, c)...)
	}
	need := 0
	for _, ch := range r.Compatibility {
		if strings.HasPrefix(ch.Name, "bootstrap ") && ch.Status != compat.Pass {
			var v int
			_, err := fmt.Sscanf(ch.Finding[strings.LastIndex(ch.Finding, "≥")+len("≥"):], " %d", &v)
			if err == nil && v > need {
				need = v
			}
		}
	}
	if need > 0 {
		parts = append(parts, fmt.Sprintf("bootstrap v%d needed", need))
	}
	if r.Policy != nil {
		n := 0
		for _, v := range r.Policy.Violations {
			if v.Severity == "error" && !v.Suppressed && !v.Existing {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, plural(n, "policy error", "policy errors"))
		}
	}
	parts = append(parts, findingsHeadline(r)...)
	if r.BaseUnavailable != "" {
		parts = append(parts, "base failed to synthesize")
	}
	return parts
}

// replacementCause names the replacement to act on: a resource replaced because its own properties
// changed (the cause) before those replaced only because they reference a replaced resource or a
// changed input (the consequences), which it counts when there is one cause.
func replacementCause(stacks []*cfndiff.StackDiff) string {
	var causes []string
	consequences := 0
	for _, top := range stacks {
		for _, s := range top.All() {
			for _, res := range s.Diff.Resources {
				if res.Impact != cfndiff.Replace || res.MetadataOnly() {
					continue
				}
				if ownReplacement(res) {
					causes = append(causes, res.LogicalID+" in "+s.DisplayName)
				} else {
					consequences++
				}
			}
		}
	}
	if len(causes) == 0 {
		return firstOf(stacks, cfndiff.Replace)
	}
	sort.Strings(causes)
	if len(causes) == 1 && consequences > 0 {
		return causes[0] + " and " + plural(consequences, "resource that references it", "resources that reference it")
	}
	return causes[0]
}

// ownReplacement is true when the resource is replaced by a change to itself: its type, or a
// property written differently whose change replaces it (per the specification, or per CloudFormation
// when its change set overrules the specification). False when only properties that resolve anew (a
// reference to a replaced resource, an input from another stack) replace it.
func ownReplacement(res *cfndiff.ResourceChange) bool {
	if res.OldType != res.NewType {
		return true
	}
	for _, p := range res.Properties {
		if p.Changed && (p.Impact == cfndiff.Replace || res.SpecImpact != cfndiff.NoChange) {
			return true
		}
	}
	return false
}

// headlineFinding is the permission change in the headline. A low-rated finding does not headline
// over the change that causes it: when a resource other than a permission resource changes (a table
// gaining an index widens the grants that name the table), that change is named instead, and the
// finding is only rated; a replacement or destroy already named is enough.
func headlineFinding(stacks []*cfndiff.StackDiff, c Counts) []string {
	if c.Worst == nil || c.Worst.Severity > cfndiff.Low {
		return []string{broadened(c)}
	}
	const low = "permissions broadened (low)"
	if c.Replace > 0 || c.Destroy > 0 {
		return []string{low}
	}
	change, ok := changeCause(stacks, c)
	if !ok {
		return []string{broadened(c)}
	}
	return []string{change, low}
}

// changeCause names the most severe change of a resource that is not a permission resource and is
// changed by its own properties, with the count of changes of that kind: "1 update (Orders in Data)".
func changeCause(stacks []*cfndiff.StackDiff, c Counts) (string, bool) {
	spec := resourcespec.Default()
	kinds := []struct {
		impact    cfndiff.Impact
		n         int
		one, many string
	}{
		{cfndiff.MayReplace, c.MayReplace, "possible replacement", "possible replacements"},
		{cfndiff.Orphan, c.Orphan, "orphan", "orphans"},
		{cfndiff.Create, c.Create, "create", "creates"},
		{cfndiff.Update, c.Update, "update", "updates"},
	}
	for _, k := range kinds {
		var names []string
		for _, top := range stacks {
			for _, s := range top.All() {
				for _, res := range s.Diff.Resources {
					if res.Impact != k.impact || res.MetadataOnly() || !ownChange(res) {
						continue
					}
					if permissionChange(spec.Type(res.Type()), res) {
						continue // its change is the finding itself
					}
					names = append(names, res.LogicalID+" in "+s.DisplayName)
				}
			}
		}
		if len(names) > 0 {
			sort.Strings(names)
			return fmt.Sprintf("%s (%s)", plural(k.n, k.one, k.many), names[0]), true
		}
	}
	return "", false
}

// permissionChange is true when the resource is a permission resource (a policy, a rule) or only
// properties that carry permissions (a role's inline policies, a group's rules) change.
func permissionChange(t *resourcespec.Type, res *cfndiff.ResourceChange) bool {
	if t == nil {
		return false
	}
	if t.Scrutiny != "" {
		return true
	}
	for _, p := range res.Properties {
		if sp, ok := t.Property(p.Name); p.Changed && (!ok || sp.Scrutiny == "") {
			return false
		}
	}
	return len(res.Properties) > 0 && len(res.Other) == 0 && !res.Added() && !res.Removed()
}

// ownChange is true when the resource changes by itself (created, removed, or written differently),
// not only because something it reads resolves anew.
func ownChange(res *cfndiff.ResourceChange) bool {
	if res.Added() || res.Removed() || res.OldType != res.NewType || len(res.Other) > 0 {
		return true
	}
	for _, p := range res.Properties {
		if p.Changed {
			return true
		}
	}
	return false
}

func firstOf(stacks []*cfndiff.StackDiff, impact cfndiff.Impact) string {
	var names []string
	for _, top := range stacks {
		for _, s := range top.All() {
			for _, res := range s.Diff.Resources {
				if res.Impact == impact {
					names = append(names, res.LogicalID+" in "+s.DisplayName)
				}
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// headGivenNote is what a review of a given head assembly says: cdkbot did not synthesize it, so
// it shows what whoever made it wrote.
const headGivenNote = "The head assembly was given to cdkbot (head-assembly), " +
	"not synthesized by cdkbot from the change: this review is only as honest as whoever made it."

// ReviewMarkdown writes the PR comment within budget bytes (0: GitHub's limit), marker first.
func ReviewMarkdown(w io.Writer, r *review.Report, budget int) error {
	return ReviewComment(w, r, CommentView{Budget: budget})
}

// CommentView is what a review's comment shows beyond the report: its size, and where on GitHub
// its commits and run are.
type CommentView struct {
	Budget int // bytes (0: GitHub's limit)
	Links  Links
}

// ReviewComment writes the PR comment within v.Budget bytes, marker first: the verdict on one
// line, what the change does, the commits and run it is of, the gates that block it, the diff,
// then compatibility and policy.
func ReviewComment(w io.Writer, r *review.Report, v CommentView) error {
	budget := v.Budget
	if budget <= 0 {
		budget = GitHubCommentLimit
	}
	var head, tail bytes.Buffer
	head.WriteString(reviewMarker(r, budget).comment() + "\n")
	head.WriteString(verdictLine(ReviewVerdict(r)) + "\n")
	if details := reviewDetails(r); details != "" {
		head.WriteString(mdText(truncate(details, 400)) + "\n\n")
	}
	head.WriteString(provenance(r, v.Links))
	if r.HeadGiven {
		head.WriteString("> [!NOTE]\n> " + headGivenNote + "\n\n")
	}
	for _, n := range r.Notes {
		head.WriteString("> [!WARNING]\n> " + mdText(truncate(n, 1000)) + "\n\n")
	}
	writeGatesMarkdown(&head, r, budget/4, v.Links)
	head.WriteString(movesMarkdown(r.Moves, budget/8))
	head.WriteString(deployedMarkdown(r.Deployed, budget/4))
	head.WriteString(driftMarkdown(r.Drift, budget/8))
	head.WriteString(findingsMarkdown(r.Findings, budget/8))
	if len(r.Compatibility) > 0 {
		tail.WriteString("\n")
		if err := CompatMarkdown(&tail, r.Compatibility); err != nil {
			return err
		}
	}
	if r.Policy != nil {
		tail.WriteString("\n")
		if err := PolicyMarkdown(&tail, r.Policy); err != nil {
			return err
		}
	}
	if head.Len()+tail.Len() > budget*3/4 {
		// Long reports (hostile or huge): compatibility and policy in one line each; the job
		// summary has them whole. Every section is bounded, so the smallest budget still posts.
		tail.Reset()
		tail.WriteString("\n" + compactSections(r) + "\n")
	}
	// The diff takes what the other sections leave; it degrades itself to fit.
	diffBudget := budget - head.Len() - tail.Len() - 64
	var diff bytes.Buffer
	if diffBudget > 500 {
		if err := DiffMarkdown(&diff, DiffReport{Stacks: r.Stacks}, DiffOptions{Budget: diffBudget,
			FoldAssets:   !r.ShowAssetChanges,
			FullDiffHint: "The full diff is in the job summary and the report artifact.",
			Notes:        moveNotes(r.Moves)}); err != nil {
			return err
		}
		// The review has its own headline.
		if i := bytes.IndexByte(diff.Bytes(), '\n'); i >= 0 && bytes.HasPrefix(diff.Bytes(), []byte("### ")) {
			diff.Next(i + 1)
		}
		for bytes.HasPrefix(diff.Bytes(), []byte("\n")) { // the sections above end with a blank line
			diff.Next(1)
		}
	}
	for _, b := range [][]byte{head.Bytes(), diff.Bytes(), tail.Bytes()} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// reviewDetails is what the headline's verdict is about: what changes, what is dangerous, what
// blocks; "" when nothing changes and nothing else is to be said.
func reviewDetails(r *review.Report) string {
	h := strings.Join(headlineParts(r), " · ")
	if h == "no changes" {
		return ""
	}
	return h
}

// compactSections is compatibility and policy in a line each.
func compactSections(r *review.Report) string {
	var parts []string
	if len(r.Compatibility) > 0 {
		parts = append(parts, fmt.Sprintf("**Compatibility: %s** (%d checks)",
			compat.Worst(r.Compatibility), len(r.Compatibility)))
	}
	if r.Policy != nil {
		errs, warns, supp := policyCounts(r.Policy)
		parts = append(parts, fmt.Sprintf("**Policy: %d error(s), %d warning(s), %d suppressed**", errs, warns, supp))
	}
	return strings.Join(parts, " · ") + " — the full report is in the job summary."
}

// gateWhy says once, for a gate's caution, what its items have in common and what to do.
var gateWhy = map[string]string{
	review.GateIncomplete: "the assembly cannot be deployed as synthesized (the CDK CLI refuses it too), " +
		"and no approval changes that: resolve these, then synthesize again.",
	review.GateExportInUse: "CloudFormation refuses to change an export that a deployed stack imports, " +
		"and no approval changes that. Deploy in two steps: first stop importing it, then change it.",
	review.GateReplaceNamed: "CloudFormation cannot replace a resource that keeps its custom name, " +
		"and no approval changes that: set a new name, or remove it so CloudFormation names it.",
	review.GateDestroyStateful:    "stateful resources are replaced or destroyed, and their data with them.",
	review.GateReplace:            "resources are replaced.",
	review.GateDestroy:            "resources are destroyed.",
	review.GateOrphan:             "resources leave their stack but stay in AWS.",
	review.GateSecurityBroadening: "permissions broaden.",
	review.GateCompatFail:         "a compatibility check fails.",
	review.GatePolicyError:        "the policy finds errors.",
	review.GateValidationError: "the app's own validation finds new errors (or a validation plugin failed, " +
		"or its report cannot be read).",
	review.GateDrift: "resources the change touches were changed outside CloudFormation.",
}

// GateAdvice is what a gate's items have in common and what to do about them, said once beside
// the items (a check-run annotation, a caution); "" for an unknown gate.
func GateAdvice(gate string) string {
	why := gateWhy[gate]
	if why == "" {
		return ""
	}
	return strings.ToUpper(why[:1]) + why[1:]
}

func writeGatesMarkdown(b *bytes.Buffer, r *review.Report, tableBudget int, links Links) {
	if r.BaseUnavailable != "" {
		fmt.Fprintf(b, "> [!CAUTION]\n> **Blocked: %s.** Without the base cdkbot cannot tell what this change "+
			"replaces or destroys, so it fails closed; below is the head alone, every resource as if created. "+
			"Fix the base, or set base-failure: first-deployment to review against nothing.%s\n\n",
			mdText(r.BaseUnavailable), reReview(links))
	}
	var failing, overridden []review.Gate
	for _, g := range r.Gates {
		switch {
		case g.Failing():
			failing = append(failing, g)
		case g.Overridden:
			overridden = append(overridden, g)
		}
	}
	if len(failing) == 0 && len(overridden) == 0 && r.BaseUnavailable == "" {
		return // the headline's verdict says so
	}
	for _, g := range failing {
		name := mdSpan(g.Name, 40)
		switch {
		case !review.Approvable(g.Name):
			fmt.Fprintf(b, "> [!CAUTION]\n> **Blocked by %s**: %s\n%s\n", name, gateWhy[g.Name], gateList(g.Items))
		case len(g.Uncovered) > 0:
			fmt.Fprintf(b, "> [!CAUTION]\n> **Blocked by %s**: new since the approval (%s). "+
				"An approval covers what its approver saw; re-approve (remove and add the label %s again, "+
				"or approve the pull request) after reading this review.\n%s\n",
				name, mdText(ApprovedBy(r.Approvals)), mdSpan(r.OverrideLabel, 100), gateList(g.Uncovered))
		default:
			fmt.Fprintf(b, "> [!CAUTION]\n> **Blocked by %s**: %s Add the label %s to approve.\n%s\n",
				name, gateWhy[g.Name], mdSpan(r.OverrideLabel, 100), gateList(g.Items))
		}
	}
	for _, g := range overridden {
		fmt.Fprintf(b, "> [!WARNING]\n> Gate %s would block; %s.\n%s\n",
			mdSpan(g.Name, 40), mdText(ApprovedBy(r.Approvals)), gateList(g.Items))
	}
	// Long lists: the cautions name a few; every item is in one table.
	rows := boundedRows{budget: tableBudget}
	for _, g := range append(failing, overridden...) {
		if len(g.Items) <= gateInline {
			continue
		}
		for _, it := range g.Items {
			rows.add(fmt.Sprintf("| %s | %s |", mdCode(g.Name, 40), mdText(truncate(it, gateItemLimit))))
		}
	}
	if len(rows.rows) > 0 {
		more := ""
		if n := rows.omitted(); n > 0 {
			more = fmt.Sprintf("\n\n%d more item(s): the job summary lists them all.", n)
		}
		fmt.Fprintf(b, "<details><summary>Every gate item (%d)</summary>\n\n"+
			"| Gate | Item |\n|---|---|\n%s%s\n\n</details>\n\n", rows.total, strings.Join(rows.rows, "\n"), more)
	}
}

// gateList lists a gate's items inside its caution, one a line: the first gateInline, then how
// many more are in the table below.
func gateList(items []string) string {
	var b strings.Builder
	for i, it := range items {
		if i == gateInline {
			fmt.Fprintf(&b, "> - and %d more (all %d in the table below)\n", len(items)-gateInline, len(items))
			break
		}
		b.WriteString("> - " + mdText(truncate(it, gateItemLimit)) + "\n")
	}
	return b.String()
}

// gateInline is how many items a gate line names before the rest go to the table;
// gateItemLimit bounds one item (a logical id can be long).
const (
	gateInline    = 3
	gateItemLimit = 300
)

// ApprovedBy says who approved failing gates, without @-mentions (a comment edited on every
// push must not notify anyone): "approved by bob (label cdkbot/approve-destructive)".
func ApprovedBy(approvals []review.Approval) string {
	var parts []string
	for _, a := range approvals {
		if a.By == "" {
			parts = append(parts, a.Via)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", a.By, a.Via))
	}
	if len(parts) == 0 {
		return "approved"
	}
	return "approved by " + strings.Join(parts, ", ")
}

func gateItems(g review.Gate) string {
	items := g.Items
	more := ""
	if len(items) > gateInline {
		more = fmt.Sprintf(" and %d more (all %d in the table below)", len(items)-gateInline, len(items))
		items = items[:gateInline]
	}
	escaped := make([]string, len(items))
	for i, it := range items {
		escaped[i] = mdText(truncate(it, gateItemLimit))
	}
	return strings.Join(escaped, "; ") + more
}

// ReviewText writes the review for a terminal; names, values, notes and approvers are cleaned.
func ReviewText(w io.Writer, r *review.Report, opts DiffOptions) error {
	opts.FoldAssets = !r.ShowAssetChanges
	ew := &errWriter{w: w}
	ew.printf("cdkbot review: %s\n", Clean(terminalHeadline(r)))
	if r.BaseUnavailable != "" {
		ew.printf("  ✗ blocked: %s; cdkbot cannot tell what the change destroys "+
			"(base-failure: first-deployment reviews against nothing)\n", Clean(r.BaseUnavailable))
	}
	if r.HeadGiven {
		ew.printf("  note: %s\n", headGivenNote)
	}
	for _, n := range r.Notes {
		ew.printf("  note: %s\n", Clean(n))
	}
	for _, g := range r.Gates {
		items := Clean(strings.Join(g.Items, "; "))
		switch {
		case g.Failing():
			ew.printf("  ✗ gate %s blocks: %s\n", Clean(g.Name), items)
			if !review.Approvable(g.Name) {
				ew.printf("    → %s\n", GateAdvice(g.Name))
			}
		case g.Overridden:
			ew.printf("  ! gate %s %s: %s\n", Clean(g.Name), Clean(ApprovedBy(r.Approvals)), items)
		case g.Triggered:
			ew.printf("  · %s: %s\n", Clean(g.Name), items)
		}
	}
	if ew.err != nil {
		return ew.err
	}
	if err := deployedText(w, r.Deployed, opts); err != nil {
		return err
	}
	if err := driftText(w, r.Drift); err != nil {
		return err
	}
	if err := findingsText(w, r); err != nil {
		return err
	}
	if err := DiffText(w, DiffReport{Stacks: r.Stacks}, opts); err != nil {
		return err
	}
	ew.printf("\n")
	if err := CompatText(w, r.Compatibility); err != nil {
		return err
	}
	if r.Policy != nil {
		ew.printf("\n")
		if err := PolicyText(w, r.Policy); err != nil {
			return err
		}
	}
	return ew.err
}

// ReviewJSON writes the review: the diff in the diff view's shape plus gates, compatibility and policy.
// The diff, its last member and the bulk of it, is written stack by stack in its place, never held.
func ReviewJSON(w io.Writer, r *review.Report) error {
	const placeholder = `"diff":0}` + "\n"
	var env bytes.Buffer
	err := encodeJSON(&env, struct {
		*review.Report
		Failed bool            `json:"failed"`
		Diff   json.RawMessage `json:"diff"`
	}{r, r.Failed(), json.RawMessage("0")}, "", false)
	if err != nil {
		return err
	}
	head, ok := bytes.CutSuffix(env.Bytes(), []byte(placeholder))
	if !ok {
		return fmt.Errorf("review JSON: the diff is not the last member")
	}
	if _, err := w.Write(append(head, `"diff":`...)); err != nil {
		return err
	}
	js := NewDiffJSONStream(w)
	for _, s := range r.Stacks {
		if err := js.Stack(s); err != nil {
			return err
		}
	}
	return js.closeWith("}\n")
}

// MarkerKey reads the key of a comment's marker; ok is false for comments without one.
func MarkerKey(body string) (string, bool) {
	m, ok := ParseMarker(body)
	return m.Key, ok
}

// ParseMarker reads the marker at the start of a comment: what a review saw (head commit and
// template hashes) for the deploy to compare with.
func ParseMarker(body string) (Marker, bool) {
	rest, ok := strings.CutPrefix(body, MarkerPrefix)
	if !ok {
		return Marker{}, false
	}
	end := strings.Index(rest, " -->")
	if end < 0 {
		return Marker{}, false
	}
	var m Marker
	if json.Unmarshal([]byte(rest[:end]), &m) != nil || m.Tool != "cdkbot" {
		return Marker{}, false
	}
	return m, true
}
