package review

import (
	"slices"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/findings"
)

// The app's findings reach the report, compared with the base; the validation-error gate is off
// by default, and when a team turns it on, new validation errors block and an approval covers them.
func TestValidationErrorGate(t *testing.T) {
	t.Parallel()
	if slices.Contains(DefaultFailOn, GateValidationError) || !slices.Contains(AllGates, GateValidationError) {
		t.Fatalf("validation-error must be a gate that is off by default: %v / %v", DefaultFailOn, AllGates)
	}
	if err := ValidateGates([]string{GateValidationError}); err != nil {
		t.Fatal(err)
	}
	base, head := load(t, "../findings/testdata/base"), load(t, "../findings/testdata/head")
	in := Input{Base: base, Head: head, ToolSchemaMax: 55}
	rep, err := Run(in)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Findings == nil || rep.Findings.Counts()[findings.Error].New != 2 {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	g := gate(rep, GateValidationError)
	if !g.Triggered || g.Enforced || rep.Failed() {
		t.Errorf("by default the gate is triggered but not enforced: %+v, failed %v", g, rep.Failed())
	}
	if len(g.Items) != 2 || !strings.Contains(g.Items[0], "S3_BUCKET_ENCRYPTION on Data/ArchiveV2/Resource in Data") {
		t.Errorf("items: %q", g.Items)
	}
	in.FailOn = []string{GateValidationError}
	if rep, err = Run(in); err != nil || !rep.Failed() {
		t.Fatalf("enforced: failed %v, %v", rep.Failed(), err)
	}
	in.Approvals = []Approval{{By: "lead", Via: "label " + DefaultOverrideLabel}}
	if rep, err = Run(in); err != nil || rep.Failed() || !gate(rep, GateValidationError).Overridden {
		t.Fatalf("approved: failed %v, %v", rep.Failed(), err)
	}
	// The same errors on the base are not the change's doing.
	if rep, err = Run(Input{Base: head, Head: head, ToolSchemaMax: 55, FailOn: []string{GateValidationError}}); err != nil || rep.Failed() {
		t.Fatalf("errors the base had: failed %v, %v", rep.Failed(), err)
	}
}
