package render

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/review"
)

// Verdict is what a review decides, the first thing its comment says.
type Verdict int

// Verdicts, from the best to the worst.
const (
	NoChanges     Verdict = iota // nothing changes and nothing blocks
	Safe                         // changes, and no gate blocks them
	Approved                     // gates would block, and approvals cover every item
	NeedsApproval                // gates block that an approval can lift
	Blocked                      // a gate blocks that no approval lifts, or the base could not be read
)

var verdictWords = map[Verdict][2]string{
	NoChanges:     {"✅", "no changes"},
	Safe:          {"✅", "safe"},
	Approved:      {"✅", "approved"},
	NeedsApproval: {"⚠️", "needs approval"},
	Blocked:       {"❌", "blocked"},
}

// String is the verdict's word.
func (v Verdict) String() string { return verdictWords[v][1] }

// Glyph is the verdict's sign: ✅, ⚠️ or ❌.
func (v Verdict) Glyph() string { return verdictWords[v][0] }

// ReviewVerdict decides a report's verdict from its gates and its diff.
func ReviewVerdict(r *review.Report) Verdict {
	return verdictOf(r.BaseUnavailable != "", r.Gates, DiffReport{Stacks: r.Stacks}.Count().StacksChanged > 0)
}

func verdictOf(baseUnavailable bool, gates []review.Gate, changed bool) Verdict {
	v := Safe
	if !changed {
		v = NoChanges
	}
	for _, g := range gates {
		switch {
		// An approval never lifts such a gate: a report that says one did (a fork's, a leg's:
		// data their author wrote) blocks all the same.
		case g.Triggered && g.Enforced && !review.Approvable(g.Name):
			return Blocked
		case g.Failing():
			v = NeedsApproval
		case g.Overridden && v != NeedsApproval:
			v = Approved
		}
	}
	if baseUnavailable {
		return Blocked
	}
	return v
}

// verdictLine is the comment's headline: the verdict's glyph and word, one short line whatever
// the change, so it reads at a glance; the details follow it.
func verdictLine(v Verdict) string {
	return "### " + v.Glyph() + " " + v.String() + " · cdkbot review\n"
}

// Links say where a review's commits and workflow run are on GitHub, for the comment to link
// them. Empty outside GitHub (the CLI, the hook, the demo): the commits are named unlinked.
type Links struct {
	// Repository is the repository's page, "https://github.com/OWNER/REPO"; commits link below it.
	Repository string
	// Run is the workflow run (attempt) that wrote the review.
	Run string
	// Command is true where the `/cdkbot review` comment reviews the pull request again.
	Command bool
}

var hexSHA = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{7,64}$`) })

// commitRef names a commit by its short SHA, linked to its page when the repository is known.
// The SHA and the repository come from the event and the environment, not from the change; a
// value that is not a hexadecimal SHA is shown as text, never linked.
func commitRef(sha string, l Links) string {
	short := commitid.Short(sha, commitid.GitHub)
	if !hexSHA().MatchString(sha) || !safeURL(l.Repository) {
		return mdCode(short, 40)
	}
	return fmt.Sprintf("[%s](%s/commit/%s)", mdCode(short, 40), strings.TrimSuffix(l.Repository, "/"), sha)
}

// safeURL accepts the https URLs Actions gives (GITHUB_SERVER_URL and what is built on it),
// without characters that could end a Markdown link, and in printable ASCII only: a control,
// bidirectional or invisible character would hide where the link goes.
func safeURL(u string) bool {
	return strings.HasPrefix(u, "https://") && !strings.ContainsAny(u, " ()<>[]\"'`\\\n\r\t") &&
		!strings.ContainsFunc(u, func(r rune) bool { return r < 0x21 || r > 0x7e })
}

// provenance is the line under the headline that tells a fresh comment from a stale one: the
// commits compared, and the workflow run that wrote it.
func provenance(r *review.Report, l Links) string {
	var parts []string
	switch {
	case r.MergeSHA != "" && r.HeadSHA != "":
		parts = append(parts, "reviewed "+commitRef(r.MergeSHA, l)+" (head "+commitRef(r.HeadSHA, l)+
			" merged into the base)")
	case r.HeadSHA != "":
		parts = append(parts, "head "+commitRef(r.HeadSHA, l))
	}
	if r.BaseSHA != "" {
		parts = append(parts, "base "+commitRef(r.BaseSHA, l))
	}
	if safeURL(l.Run) {
		parts = append(parts, "[workflow run]("+l.Run+")")
	}
	if l.Command {
		// The base branch moves on without a pull_request event: the review then compares with
		// a base that is no longer the branch's.
		parts = append(parts, "comment <code>/cdkbot review</code> to review against the base branch as it is now")
	}
	if len(parts) == 0 {
		return ""
	}
	return "<sub>" + strings.Join(parts, " · ") + "</sub>\n\n"
}

// reReview is the hint to review again, where a new review can give another answer without a
// new commit.
func reReview(l Links) string {
	if !l.Command {
		return ""
	}
	return " Comment `/cdkbot review` to review again."
}
