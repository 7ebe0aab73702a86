package compat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/semver"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// declaredVersion is the schema version a package release declares: the "version" of its
// schema version file in the CDK v1/v2-tracking era, the package version itself since the schema
// package is versioned on its own (its major is the schema revision).
func declaredVersion(t *testing.T, dir, pkg string) semver.Version {
	for _, f := range []string{"cloud-assembly.version.json", "version.json"} {
		raw, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		var v struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(raw, &v) == nil && v.Version != "" {
			return semver.MustParse(v.Version)
		}
	}
	return semver.MustParse(pkg)
}

// TestSchemaHistory runs the checker on every consecutive pair of published schema versions
// (testdata/schemas, fetched by fetch.sh) and records, in a golden table, the bump the changes
// require against the bump the package declared.
func TestSchemaHistory(t *testing.T) {
	raw, err := os.ReadFile("testdata/schemas/versions.txt")
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			versions = append(versions, l)
		}
	}
	if len(versions) < 21 {
		t.Fatalf("%d schema versions, want at least 21", len(versions))
	}
	load := func(v string) any {
		raw, err := os.ReadFile(filepath.Join("testdata/schemas", v, "cloud-assembly.schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, string(raw))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s %-9s %-15s %6s %-8s %-8s %s\n", "package", "→", "schema", "changes", "required", "declared", "verdict")
	verdicts := map[Verdict]int{}
	for i := 1; i < len(versions); i++ {
		oldV, newV := versions[i-1], versions[i]
		changes, err := CompareSchemas(load(oldV), load(newV))
		if err != nil {
			t.Fatalf("%s → %s: %v", oldV, newV, err)
		}
		od, nd := declaredVersion(t, filepath.Join("testdata/schemas", oldV), oldV), declaredVersion(t, filepath.Join("testdata/schemas", newV), newV)
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
	fmt.Fprintf(&b, "\n%d pairs: %d ok, %d under-bumped, %d over-bumped, %d no-bump, %d between parallel release lines\n", len(versions)-1,
		verdicts[OK], verdicts[UnderBumped], verdicts[OverBumped], verdicts[NoBump], verdicts["parallel-line"])
	golden.Assert(t, "testdata/schema-history.txt", []byte(b.String()))
}
