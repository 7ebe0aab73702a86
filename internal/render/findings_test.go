package render

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/findings"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

func findingsReview(t *testing.T, failOn []string) *review.Report {
	t.Helper()
	load := func(dir string) *assembly.Assembly {
		a, err := assembly.Load(os.DirFS(dir), dir)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	rep, err := review.Run(review.Input{Base: load("../findings/testdata/base"), Head: load("../findings/testdata/head"),
		ToolSchemaMax: 55, Key: "k", FailOn: failOn})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The assemblies the real aws-cdk-lib wrote (internal/findings/testdata): the app's findings in
// their own collapsed section, new ones marked, counted in the headline; the renamed bucket as a
// likely move with the cdk refactor hint; and, with the gate on, new validation errors block.
func TestFindingsGoldens(t *testing.T) {
	t.Parallel()
	for name, failOn := range map[string][]string{"findings": nil, "findings-gated": {review.GateValidationError}} {
		rep := findingsReview(t, failOn)
		var md, text bytes.Buffer
		if err := ReviewMarkdown(&md, rep, 0); err != nil {
			t.Fatal(err)
		}
		if err := ReviewText(&text, rep, DiffOptions{}); err != nil {
			t.Fatal(err)
		}
		assertBalanced(t, md.String())
		golden.Assert(t, "testdata/review/"+name+".md", md.Bytes())
		golden.Assert(t, "testdata/review/"+name+".txt", text.Bytes())
	}
	rep := findingsReview(t, nil)
	head := ReviewHeadline(rep)
	for _, want := range []string{"2 new validation errors", "3 new app warnings", "1 likely move"} {
		if !strings.Contains(head, want) {
			t.Errorf("headline %q lacks %q", head, want)
		}
	}
	var md strings.Builder
	if err := ReviewMarkdown(&md, rep, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<details><summary><b>Findings from the app</b>: 2 errors (new) · 4 warnings (3 new) · 1 info</summary>",
		"`cdk refactor` moves it instead",
		"<code>ArchiveDA4CB258</code> in **Data** (orphan) → <code>ArchiveV2D864CA9B</code> in **Data**",
		"CloudFormation Validate runs on the head only",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// The findings and the moves are the app's text: a message, a rule, a path or a logical id that
// tries to close the section, link, mention, run a workflow command or hide itself stays inert in
// every view, and the section stays within its budget however many findings there are.
func TestHostileFindingsStayInert(t *testing.T) {
	t.Parallel()
	var fs []findings.Finding
	for i := range 400 {
		fs = append(fs, findings.Finding{Source: findings.Source(i % 2), Plugin: evil, Rule: evilLead, Severity: findings.Severity(i % 4),
			Custom: evil, Stack: evil, Path: evil, LogicalID: evilLead, Message: evil + " </details></summary>", Fix: evil,
			Status: findings.Status(i % 3)})
	}
	rep := &review.Report{Key: "k", OverrideLabel: "ok",
		Findings: &findings.Report{Findings: fs, Failures: []string{evil, evilLead}, Problem: evil, Suppressed: 2, Omitted: 7},
		Moves: []review.Move{{Type: evil, From: review.MoveEnd{Stack: evilLead, LogicalID: evil, Impact: "destroy"},
			To: review.MoveEnd{Stack: evil, LogicalID: evilLead, Impact: "create"}}},
		Gates: []review.Gate{{Name: review.GateValidationError, Triggered: true, Enforced: true, Items: findings.GateItems(&findings.Report{Findings: fs})}},
	}
	var md, text bytes.Buffer
	if err := ReviewMarkdown(&md, rep, 0); err != nil {
		t.Fatal(err)
	}
	if err := ReviewText(&text, rep, DiffOptions{}); err != nil {
		t.Fatal(err)
	}
	assertInert(t, "findings.md", md.String(), "markdown")
	assertInert(t, "findings.txt", text.String(), "text")
	if strings.Count(md.String(), "</details>") != strings.Count(md.String(), "<details>") || strings.Contains(md.String(), "<script") {
		t.Error("a finding closed the section")
	}
	section := findingsMarkdown(rep.Findings, GitHubCommentLimit/8)
	if len(section) > GitHubCommentLimit/8 || !strings.Contains(section, "more: the job summary") {
		t.Errorf("section of %d bytes for a budget of %d", len(section), GitHubCommentLimit/8)
	}
	golden.Assert(t, "testdata/hostile/findings.md", []byte(findingsMarkdown(rep.Findings, 4000)+movesMarkdown(rep.Moves, 4000)))
	var one bytes.Buffer
	short := *rep
	short.Findings = &findings.Report{Findings: fs[:4], Failures: []string{evil}, Problem: evilLead}
	if err := findingsText(&one, &short); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/hostile/findings.txt", one.Bytes())
}

// The two rows of a likely move name each other in the diff, instead of reading as an unrelated
// orphan and create.
func TestMoveRowsNameEachOther(t *testing.T) {
	t.Parallel()
	var md strings.Builder
	if err := ReviewMarkdown(&md, findingsReview(t, nil), 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| ⊘ | <code>ArchiveDA4CB258</code><br><sub>/Data/Archive/Resource</sub> | <code>AWS::S3::Bucket</code> | **orphan**: the resource is removed from the stack but kept in AWS \\(DeletionPolicy: Retain\\) · likely moved to ArchiveV2D864CA9B in Data; cdk refactor keeps it |",
		"| + | <code>ArchiveV2D864CA9B</code><br><sub>/Data/ArchiveV2/Resource</sub> | <code>AWS::S3::Bucket</code> | **create** · likely ArchiveDA4CB258 of Data, moved here |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("diff lacks %q", want)
		}
	}
}

// The headline counts the errors the validation-error gate counts: an error the template
// validator found on the head, which the base never ran, is counted; one the base had is not.
func TestHeadlineCountsWhatTheGateCounts(t *testing.T) {
	t.Parallel()
	rep := &review.Report{Key: "k", Findings: &findings.Report{Findings: []findings.Finding{
		{Source: findings.Validation, Plugin: findings.TemplateValidator, Severity: findings.Error, Status: findings.NotCompared},
		{Source: findings.Validation, Plugin: "p", Severity: findings.Fatal, Status: findings.Existing},
		{Source: findings.Annotation, Severity: findings.Warning, Status: findings.Existing},
	}}}
	if got := ReviewHeadline(rep); !strings.Contains(got, "1 new validation error") || strings.Contains(got, "warning") {
		t.Errorf("headline: %q", got)
	}
	if got := findingsCounts(rep.Findings); strings.Contains(got, "already on the base") {
		t.Errorf("counts of findings not all on the base: %q", got)
	}
	rep.Findings.Findings = rep.Findings.Findings[1:]
	if got := findingsCounts(rep.Findings); got != "1 error · 1 warning · all already on the base" {
		t.Errorf("counts of findings all on the base: %q", got)
	}
}

// However many findings, failed plugins and moves an app produces, with ids as long as it likes,
// the comment stays within the smallest budget, headline and verdict first.
func TestFindingsAndMovesFitTheSmallestBudget(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("L", 1000)
	var fs []findings.Finding
	var failures []string
	var moves []review.Move
	for i := range 300 {
		fs = append(fs, findings.Finding{Source: findings.Validation, Plugin: long, Rule: long, Severity: findings.Error,
			Stack: long, Path: long, Message: long, Fix: long})
		failures = append(failures, long)
		moves = append(moves, review.Move{Type: long, From: review.MoveEnd{Stack: long, LogicalID: long, Impact: "destroy"},
			To: review.MoveEnd{Stack: long, LogicalID: long, Impact: "create"}})
		_ = i
	}
	rep := &review.Report{Key: "k", OverrideLabel: "ok", Moves: moves,
		Findings: &findings.Report{Findings: fs, Failures: failures, Problem: long + long},
		Gates: []review.Gate{{Name: review.GateValidationError, Triggered: true, Enforced: true,
			Items: findings.GateItems(&findings.Report{Findings: fs})}}}
	for _, budget := range []int{8 << 10, 16 << 10, 32 << 10} {
		var b strings.Builder
		if err := ReviewMarkdown(&b, rep, budget); err != nil {
			t.Fatal(err)
		}
		if b.Len() > budget {
			t.Errorf("budget %d: %d bytes", budget, b.Len())
		}
		if !strings.HasPrefix(b.String()[strings.Index(b.String(), "###"):], "### ⚠️ needs approval · cdkbot review") || !strings.Contains(b.String(), "**Blocked by `validation-error`**") {
			t.Errorf("budget %d: the headline or the verdict is missing:\n%.600s", budget, b.String())
		}
		assertBalanced(t, b.String())
	}
}
