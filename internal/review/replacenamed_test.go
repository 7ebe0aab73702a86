package review

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copyDemo copies the demo's base assembly to a temporary directory, applying edit to ShopData's
// template, and loads it.
func copyDemo(t *testing.T, edit func(string) string) string {
	t.Helper()
	src, dst := assemblies+"before", t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "ShopData.template.json" {
			b = []byte(edit(string(b)))
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// Changing the key of a table that keeps its TableName needs a replacement CloudFormation refuses:
// the replace-named gate blocks by default, says how to go ahead, and no approval overrides it.
func TestReplaceNamedGate(t *testing.T) {
	t.Parallel()
	if !slices.Contains(DefaultFailOn, GateReplaceNamed) {
		t.Errorf("DefaultFailOn %v lacks %s", DefaultFailOn, GateReplaceNamed)
	}
	base := load(t, assemblies+"before")
	rekey := func(s string) string {
		out := strings.ReplaceAll(s, `"AttributeName": "pk"`, `"AttributeName": "orderId"`)
		if out == s {
			t.Fatal("the demo table's key is not named pk")
		}
		return out
	}
	for _, c := range []struct {
		name   string
		edit   func(string) string
		refuse bool
	}{
		{"name kept", rekey, true},
		{"renamed", func(s string) string {
			return strings.ReplaceAll(rekey(s), `"TableName": "shop-orders"`, `"TableName": "shop-orders-v2"`)
		}, false},
	} {
		head := load(t, copyDemo(t, c.edit))
		approved := []Approval{{By: "alice", Via: "label " + DefaultOverrideLabel}}
		r, err := Run(Input{Base: base, Head: head, ToolSchemaMax: 55, Approvals: approved})
		if err != nil {
			t.Fatal(err)
		}
		g := gate(r, GateReplaceNamed)
		if !c.refuse {
			if g.Triggered {
				t.Errorf("%s: %+v", c.name, g)
			}
			continue
		}
		if !g.Failing() || g.Overridden || len(g.Items) != 1 {
			t.Fatalf("%s: want a failing gate no approval overrides: %+v", c.name, g)
		}
		// What every item of the gate shares (CloudFormation refuses; set a new name) is the
		// gate's to say once: the item names the resource and the property that keeps its name.
		for _, want := range []string{"OrdersA9B65338 (AWS::DynamoDB::Table) in ShopData", "keeps its TableName"} {
			if !strings.Contains(g.Items[0], want) {
				t.Errorf("%s: item %q lacks %q", c.name, g.Items[0], want)
			}
		}
	}
}
