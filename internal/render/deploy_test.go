package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// A deploy with every result, outputs, causes and hostile strings from AWS (a resource
// reason that tries to close the table, mention people and inject HTML).
func TestDeployReportGoldens(t *testing.T) {
	t.Parallel()
	rep := deployplan.Report{Key: "deploy/cdk/deploy/.", Revision: "cccccccccccccccccccccccccccccccccccccccc", RunURL: "https://github.com/acme/shop/actions/runs/77",
		Seconds: 81.25, Unreviewed: []string{"App: template differs from the review of #8 at h8old"},
		Outcomes: []deployplan.Outcome{
			{Stack: "Network", StackName: "net", Environment: "aws://123456789012/us-east-1", Result: deployplan.Deployed, Status: "UPDATE_COMPLETE",
				Seconds: 42.31, Outputs: map[string]string{"VpcId": "vpc-0abc", "Zone": "example.com"}},
			{Stack: "Dns", Environment: "aws://123456789012/us-east-1", Result: deployplan.NoChanges, Status: "CREATE_COMPLETE", Seconds: 1.2},
			{Stack: "Service", Environment: "aws://123456789012/us-east-1", Result: deployplan.Failed, Status: "UPDATE_ROLLBACK_COMPLETE", Seconds: 30,
				Error:  "stack Service (aws://123456789012/us-east-1): ended UPDATE_ROLLBACK_COMPLETE: Queue: bad | </details> @org/team <img src=x>",
				Causes: []string{"Queue: bad | </details> @org/team <img src=x>"}},
			{Stack: "Web", Environment: "aws://123456789012/us-east-1", Result: deployplan.Skipped, Reason: "depends on Service, which did not deploy"},
			{Stack: "Admin", Environment: "aws://123456789012/us-east-1", Result: deployplan.Refused, Seconds: 0.4,
				Error: "the change broadens permissions (2 IAM statement(s) added) and --require-approval is broadening"},
		}}
	var text, md, js bytes.Buffer
	if err := DeploySummaryText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if err := DeployMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := DeploySummaryJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/deploy/report.txt", text.Bytes())
	golden.Assert(t, "testdata/deploy/report.md", md.Bytes())
	golden.Assert(t, "testdata/deploy/report.json", js.Bytes())
	for _, bad := range []string{"| </details>", "<img", "@org"} {
		if strings.Contains(md.String(), bad) {
			t.Errorf("markdown carries %q unescaped", bad)
		}
	}
	if m, ok := ParseMarker(md.String()); !ok || m.Key != rep.Key || m.HeadSHA != rep.Revision {
		t.Errorf("marker: %+v %v", m, ok)
	}

	refused := deployplan.Report{Revision: "abc1234def", Refused: "on-unreviewed is refuse: nothing deployed"}
	md.Reset()
	_ = DeployMarkdown(&md, refused)
	if !refused.Failed() || !strings.HasPrefix(md.String(), "### ⛔ cdkbot did not deploy <code>abc1234</code>\n\non-unreviewed is refuse: nothing deployed") {
		t.Errorf("refused:\n%s", md.String())
	}
}

// Output values reach the Markdown only when the team asks for them.
func TestDeployOutputsShownOnRequest(t *testing.T) {
	t.Parallel()
	rep := deployplan.Report{Outcomes: []deployplan.Outcome{{Stack: "Network", Result: deployplan.Deployed, Outputs: map[string]string{"DbPassword": "hunter2"}}}}
	var hidden, shown bytes.Buffer
	DeployMarkdown(&hidden, rep)
	rep.ShowOutputs = true
	DeployMarkdown(&shown, rep)
	if strings.Contains(hidden.String(), "hunter2") || !strings.Contains(hidden.String(), "DbPassword") || !strings.Contains(shown.String(), "hunter2") {
		t.Errorf("hidden:\n%s\nshown:\n%s", hidden.String(), shown.String())
	}
}
