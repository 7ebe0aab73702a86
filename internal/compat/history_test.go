package compat

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/semver"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// TestSchemaHistory runs the checker on every consecutive pair of published schema versions
// (testdata/schemas, fetched by fetch.sh) and records, in a golden table, the bump the changes
// require against the bump the package declared.
func TestSchemaHistory(t *testing.T) {
	t.Parallel()
	published := PublishedSchemas()
	if len(published) < 21 {
		t.Fatalf("%d published schemas embedded, want at least 21", len(published))
	}
	load := func(p PublishedSchema) any {
		v, err := p.Load()
		if err != nil {
			t.Fatalf("%s: %v", p.Package, err)
		}
		return v
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s %-9s %-15s %6s %-8s %-8s %s\n", "package", "→", "schema", "changes", "required", "declared", "verdict")
	verdicts := map[Verdict]int{}
	for i := 1; i < len(published); i++ {
		oldV, newV := published[i-1].Package, published[i].Package
		changes, err := CompareSchemas(load(published[i-1]), load(published[i]))
		if err != nil {
			t.Fatalf("%s → %s: %v", oldV, newV, err)
		}
		od, nd := semver.MustParse(published[i-1].Declared), semver.MustParse(published[i].Declared)
		required := RequiredBump(changes)
		declared, forward := semver.BumpBetween(od, nd)
		verdict := Verdict("parallel-line")
		if forward {
			// CDK v1 and v2 released the schema on parallel lines: 1.204.0 declares schema 21,
			// 2.0.0 declares 15. A declared decrease is a line switch, not a verdict.
			if verdict, err = Judge(required, od, nd); err != nil {
				t.Fatalf("%s → %s: %v", oldV, newV, err)
			}
		}
		verdicts[verdict]++
		fmt.Fprintf(&b, "%-9s %-9s %-15s %6d %-8s %-8s %s\n", oldV, newV, od.String()+"→"+nd.String(), len(changes), required, declared, verdict)
		for _, c := range changes {
			if c.Bump == semver.Major {
				fmt.Fprintf(&b, "    major: %s %s: %s\n", c.Kind, c.Path, c.Detail)
			}
		}
	}
	fmt.Fprintf(&b, "\n%d pairs: %d ok, %d under-bumped, %d over-bumped, %d no-bump, %d between parallel release lines\n", len(published)-1,
		verdicts[OK], verdicts[UnderBumped], verdicts[OverBumped], verdicts[NoBump], verdicts["parallel-line"])
	golden.Assert(t, "testdata/schema-history.txt", []byte(b.String()))
}
