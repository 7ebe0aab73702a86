package render

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/publishplan"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/stackstate"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// evil is what a pull request, an assembly or AWS can put in any name or value: a line that
// would run as a workflow command, terminal escapes (clear screen, an OSC 8 hyperlink), a
// zero-width space and a right-to-left override, a legacy "##[" command, URLs, a www. name, an
// e-mail address and a team mention. evilLead starts with a workflow command itself.
const (
	evil     = "Tab\u200ble\n::error::forged \x1b[2J\x1b]8;;https://evil.test\x07click\x1b]8;;\x07 \u202eexe.txt ##[warning]x https://evil.test www.evil.test a@evil.test @org/team"
	evilLead = "::add-mask::lead"
)

func hostileTemplate(t *testing.T, value string) *cfn.Object {
	t.Helper()
	tpl := map[string]any{"Resources": map[string]any{
		evil: map[string]any{"Type": "AWS::SQS::Queue", "Properties": map[string]any{"QueueName": value,
			"Tags": []any{map[string]any{"Key": evil, "Value": value}}}},
		evilLead: map[string]any{"Type": "AWS::S3::Bucket", "Properties": map[string]any{"BucketName": value}},
		"Policy": map[string]any{"Type": "AWS::IAM::Policy", "Properties": map[string]any{"PolicyName": "p",
			"PolicyDocument": map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": value, "Resource": value}}}}},
	}, "Outputs": map[string]any{evil: map[string]any{"Value": value}}}
	b, err := json.Marshal(tpl)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cfn.ParseJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return cfn.AsObject(v)
}

func hostileDiff(t *testing.T) *cfndiff.StackDiff {
	t.Helper()
	d := cfndiff.DiffTemplates(evil, hostileTemplate(t, "old"), hostileTemplate(t, evil), cfndiff.Options{})
	d.StackName, d.Environment = evilLead, "aws://123456789012/us-east-1"
	d.Paths = map[string]string{evil: "App/" + evil, evilLead: evilLead}
	return d
}

func hostileReport(t *testing.T) *review.Report {
	d := hostileDiff(t)
	gone := cfndiff.DiffTemplates(evilLead, hostileTemplate(t, "x"), cfn.NewObject(), cfndiff.Options{})
	return &review.Report{Key: "k", HeadSHA: "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0", OverrideLabel: "cdkbot/approve-destructive",
		Stacks:    []*cfndiff.StackDiff{d, gone},
		Identity:  map[string]review.Identity{evil: {Digest: strings.Repeat("0", 32)}},
		Approvals: []review.Approval{{By: evil, Via: "label " + evil}},
		Notes:     []string{evil, evilLead},
		Gates: []review.Gate{{Name: "destroy", Triggered: true, Enforced: true, Items: []string{evilLead, evil}},
			{Name: "replace", Triggered: true, Overridden: true, Items: []string{evil}}},
		Compatibility: []compat.Check{{Name: evil, Status: compat.Warn, Finding: evilLead, Action: evil}},
		Policy: &aspects.Report{Violations: []aspects.Violation{{Rule: evil, Severity: "error", Path: evilLead, Message: evil}},
			Mutations: []aspects.Mutation{{Aspect: evilLead, Path: evil, Change: evil}}, Warnings: []string{evil}},
		Deployed: []review.Deployed{{Stack: evilLead, State: review.DeployedUnknown, Note: evil},
			{Stack: evil, State: review.DeployedNotDeployed}},
		Drift: []review.StackDrift{{Stack: evil, Resources: []stackstate.Drifted{{LogicalID: evilLead, Type: "AWS::SQS::Queue",
			Status: "MODIFIED", Differences: []stackstate.PropertyDifference{{Path: evil, Expected: evilLead, Actual: evil}}}}}},
	}
}

func hostileDeploy() deployplan.Report {
	return deployplan.Report{Revision: "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0", Unreviewed: []string{evil, evilLead}, ShowOutputs: true,
		Outcomes: []deployplan.Outcome{
			{Stack: evilLead, Environment: evil, Result: deployplan.Failed, Status: "UPDATE_ROLLBACK_COMPLETE\n::error::x",
				Error: evil + "\n" + evilLead, Causes: []string{evil, evilLead}},
			{Stack: evil, Result: deployplan.Deployed, Status: "UPDATE_COMPLETE", Outputs: map[string]string{evilLead: evil, evil: evilLead}},
			{Stack: "Skipped", Result: deployplan.Skipped, Reason: evilLead},
		}}
}

// Every view, given names and values an attacker chose everywhere they can appear, shows them
// inert: no line GitHub's runner would run as a workflow command, no terminal escape, nothing
// invisible or reordering left as it is, and in Markdown nothing that links or mentions. The
// golden files show how each view writes them.
func TestHostileValuesStayInertInEveryView(t *testing.T) {
	t.Parallel()
	r := hostileReport(t)
	dr := DiffReport{Stacks: r.Stacks}
	var inspection Inspection
	inspection.Assembly, inspection.SchemaVersion, inspection.MinimumCLIVersion = evil, evilLead, evil
	inspection.Stacks = []InspectedStack{{ID: evilLead, StackName: evil, DisplayName: evilLead, Account: evil, Region: evilLead,
		TemplateFile: evil, Dependencies: []string{evil, evilLead}, AssumeRoleARN: evilLead, TemplateAssetURL: evil,
		Tags: map[string]string{evil: evilLead, evilLead: evil}}}
	inspection.Assets.Files = []InspectedFile{{ID: evilLead, Packaging: evil, SourcePath: evilLead}}
	inspection.LegacyAssets = []InspectedLegacy{{Stack: evil, ID: evilLead, Packaging: "zip", SourcePath: evil}}
	inspection.Messages = []InspectedMessage{{Stack: evilLead}}
	inspection.Messages[0].Level, inspection.Messages[0].Path, inspection.Messages[0].Text = evilLead, evil, evil
	plan := &deployplan.Plan{Stacks: []deployplan.Stack{{ID: evilLead, Env: evil, AssumeRoleARN: evil, DependsOn: []string{evil},
		Template: deployplan.Template{URL: evil}}}}
	assets := &publishplan.Plan{Jobs: []publishplan.Job{{ID: evilLead, Manifest: evil, Kind: publishplan.File}}}
	publish := publishplan.Summary{Outcomes: []publishplan.Outcome{{Asset: evilLead, Destination: evil, Target: evil,
		State: publishplan.Failed, Error: evil + "\n" + evilLead, Note: evil}}}
	var reviewJSON bytes.Buffer
	if err := ReviewJSON(&reviewJSON, r); err != nil {
		t.Fatal(err)
	}

	views := []struct {
		name string
		kind string // text, markdown or json
		view func(w *bytes.Buffer) error
	}{
		{"inspect.txt", "text", func(w *bytes.Buffer) error { return InspectionText(w, inspection) }},
		{"diff.txt", "text", func(w *bytes.Buffer) error { return DiffText(w, dr, DiffOptions{}) }},
		{"diff-color.txt", "text", func(w *bytes.Buffer) error { return DiffText(w, dr, DiffOptions{Color: true}) }},
		{"plan.txt", "text", func(w *bytes.Buffer) error { return PlanText(w, plan, assets) }},
		{"review.txt", "text", func(w *bytes.Buffer) error { return ReviewText(w, r, DiffOptions{}) }},
		{"deploy.txt", "text", func(w *bytes.Buffer) error { return DeploySummaryText(w, hostileDeploy()) }},
		{"publish.txt", "text", func(w *bytes.Buffer) error { return PublishSummaryText(w, publish, false) }},
		{"diff.md", "markdown", func(w *bytes.Buffer) error { return DiffMarkdown(w, dr, DiffOptions{}) }},
		{"review.md", "markdown", func(w *bytes.Buffer) error { return ReviewMarkdown(w, r, 0) }},
		{"deploy.md", "markdown", func(w *bytes.Buffer) error { return DeployMarkdown(w, hostileDeploy()) }},
		{"fork.md", "markdown", func(w *bytes.Buffer) error {
			return ForkReviewMarkdown(w, reviewJSON.Bytes(), "k", "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0", 0)
		}},
		{"inspect.json", "json", func(w *bytes.Buffer) error { return InspectionJSON(w, inspection) }},
		{"diff.json", "json", func(w *bytes.Buffer) error { return DiffJSON(w, dr) }},
		{"review.json", "json", func(w *bytes.Buffer) error { return ReviewJSON(w, r) }},
		{"deploy.json", "json", func(w *bytes.Buffer) error { return DeploySummaryJSON(w, hostileDeploy()) }},
		{"plan.json", "json", func(w *bytes.Buffer) error { return PlanJSON(w, plan, assets) }},
		{"plan.matrix.json", "json", func(w *bytes.Buffer) error { return PlanGitHubMatrix(w, plan, assets) }},
	}
	for _, v := range views {
		var out bytes.Buffer
		if err := v.view(&out); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		assertInert(t, v.name, out.String(), v.kind)
		switch v.kind {
		case "json":
			if !json.Valid(out.Bytes()) {
				t.Errorf("%s: invalid JSON", v.name)
			}
		default:
			golden.Assert(t, "testdata/hostile/"+v.name, out.Bytes())
		}
	}
}

// assertInert checks one view's output: the rules every output keeps, and the Markdown's.
func assertInert(t *testing.T, name, out, kind string) {
	t.Helper()
	if kind != "text" || !strings.HasSuffix(name, "-color.txt") {
		if strings.Contains(out, "\x1b") {
			t.Errorf("%s: an ESC byte", name)
		}
	} else if strings.Contains(strings.ReplaceAll(out, "\x1b[", ""), "\x1b") {
		t.Errorf("%s: an ESC byte that is no colour of cdkbot's", name)
	}
	// cdkbot's own icons, with their emoji selector: a skipped stack, a warning.
	own := strings.NewReplacer("⏭️", "", "⚠️", "").Replace(out)
	if i := strings.IndexFunc(own, func(r rune) bool { return r != '\n' && r != '\x1b' && unsafeRune(r) }); i >= 0 {
		t.Errorf("%s: %U shown as it is", name, []rune(own[i:])[0])
	}
	for _, line := range strings.Split(out, "\n") {
		if l := strings.TrimLeftFunc(line, unicode.IsSpace); strings.HasPrefix(l, "::") || strings.Contains(line, "##[") {
			t.Errorf("%s: a workflow command: %q", name, line)
		}
	}
	if kind != "json" && !strings.Contains(out, `u200b`) {
		t.Errorf("%s: the zero-width space is not shown", name)
	}
	if kind == "markdown" {
		if found := gfmAutolinks(htmlComment.ReplaceAllString(out, "")); len(found) > 0 {
			t.Errorf("%s: links or mentions %q", name, found)
		}
		assertBalanced(t, out)
	}
}

// htmlComment is a hidden comment (cdkbot's marker): GitHub renders nothing of it.
var htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
