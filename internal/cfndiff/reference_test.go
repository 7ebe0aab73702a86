package cfndiff

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

var updateDeviations = flag.Bool("update", false, "record disagreements with the reference in testdata/reference/deviations.json")

const deviationsFile = "testdata/reference/deviations.json"

// deviation is a recorded, deliberate disagreement with the reference on one corpus case.
type deviation struct {
	Reason string `json:"reason"`
	Ours   any    `json:"ours,omitempty"` // our projection, so a change in behaviour is noticed
}

// TestReferenceCorpus compares every template pair recorded from @aws-cdk/cloudformation-diff
// (testdata/reference, see its README) with the reference's verdict: every resource impact,
// every section change, every security addition and removal. Disagreements must be recorded
// in deviations.json with the reason cdkbot differs on purpose.
func TestReferenceCorpus(t *testing.T) {
	t.Parallel()
	dirs, _ := filepath.Glob("testdata/reference/*/*/expected.json")
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	if len(dirs) < 250 {
		t.Fatalf("only %d reference cases", len(dirs))
	}
	deviations := map[string]deviation{}
	if raw, err := os.ReadFile(deviationsFile); err == nil {
		if err := json.Unmarshal(raw, &deviations); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	agree, deviate := 0, 0
	for _, dir := range dirs {
		name := filepath.ToSlash(strings.TrimPrefix(dir, "testdata/reference/")) // peer/X and peer-changeset/X may share X
		seen[name] = true
		got, skip := referenceProjection(t, dir)
		want := readJSON(t, filepath.Join(dir, "expected.json"))
		dev, recorded := deviations[name]
		switch {
		case skip != "":
			deviations[name] = deviation{Reason: skip}
			deviate++
		case reflect.DeepEqual(got, want):
			agree++
			if recorded {
				if *updateDeviations {
					delete(deviations, name)
				} else {
					t.Errorf("%s: agrees with the reference now; remove its stale entry from %s", name, deviationsFile)
				}
			}
		default:
			deviate++
			switch {
			case *updateDeviations:
				reason := dev.Reason
				if reason == "" || !recorded {
					reason = "TODO: explain why cdkbot differs"
				}
				deviations[name] = deviation{Reason: reason, Ours: got}
			case !recorded:
				t.Errorf("%s: disagrees with the reference and no deviation is recorded\n%s", name, jsonDiff(want, got))
			case strings.HasPrefix(dev.Reason, "TODO") || dev.Reason == "":
				t.Errorf("%s: deviation has no reason", name)
			case !reflect.DeepEqual(roundTrip(t, dev.Ours), got):
				t.Errorf("%s: our verdict changed from the recorded deviation\n%s", name, jsonDiff(roundTrip(t, dev.Ours), got))
			}
		}
	}
	for name := range deviations {
		if !seen[name] {
			delete(deviations, name)
		}
	}
	if *updateDeviations {
		raw, _ := json.MarshalIndent(deviations, "", "  ")
		if err := os.WriteFile(deviationsFile, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("reference corpus: %d cases, %d agree, %d recorded deviations", len(dirs), agree, deviate)
}

// referenceProjection runs our diff on a case and renders it in the reference's verdict shape.
// skip is non-empty for cases outside what cdkbot's template diff does.
func referenceProjection(t *testing.T, dir string) (got any, skip string) {
	t.Helper()
	old := readTemplate(t, filepath.Join(dir, "old.json"))
	new := readTemplate(t, filepath.Join(dir, "new.json"))
	var args struct {
		ChangeSet *string `json:"changeSet"`
		IsImport  bool    `json:"isImport"`
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "args.json")); err == nil {
		_ = json.Unmarshal(raw, &args)
	}
	d := Diff(old, new, Options{Import: args.IsImport})
	if args.ChangeSet != nil {
		return nil, "not compared: the reference merged a CloudFormation change set into this diff; cdkbot's template diff " +
			"compares synthesized templates only (change sets are created by the deploy flow)"
	}
	return roundTrip(t, projection(d)), ""
}

func readTemplate(t *testing.T, path string) *cfn.Object {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cfn.ParseJSON(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfn.AsObject(v)
}

func readJSON(t *testing.T, path string) any {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// roundTrip normalizes a value through JSON so it compares with decoded expectations.
func roundTrip(t *testing.T, v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

var referenceImpact = map[Impact]string{NoChange: "NO_CHANGE", Import: "WILL_IMPORT", Update: "WILL_UPDATE", Create: "WILL_CREATE",
	Orphan: "WILL_ORPHAN", MayReplace: "MAY_REPLACE", Replace: "WILL_REPLACE", Destroy: "WILL_DESTROY"}

// projection maps our diff to the reference's expected.json shape. One labelling difference is
// mapped rather than recorded per case: a property the specification does not describe is
// "update (type unknown to the specification)" for us and has no impact (NO_CHANGE) for the
// reference, so such properties project to NO_CHANGE and the resource impact is recomputed the
// reference's way from the projected properties.
func projection(d *TemplateDiff) map[string]any {
	section := func(s SectionDiff) map[string]any {
		return map[string]any{"added": s.Keys(Added), "removed": s.Keys(Removed), "updated": s.Keys(Updated)}
	}
	resources := map[string]any{}
	for _, r := range d.Resources {
		props := map[string]any{}
		impact := r.Impact
		recompute := !r.Added() && !r.Removed() && !r.typeChanged() && impact != Import
		projected := NoChange
		if len(r.Other) > 0 {
			projected = Update
		}
		for _, p := range r.Properties {
			pi := p.Impact
			if p.Unknown {
				pi = NoChange
			}
			props[p.Name] = referenceImpact[pi]
			projected = worse(projected, pi)
		}
		if recompute {
			impact = projected
		}
		others := []string{}
		for _, o := range r.Other {
			others = append(others, o.Key)
		}
		sort.Strings(others)
		var oldType, newType any
		if r.oldPresent && r.OldType != "" {
			oldType = r.OldType
		}
		if r.newPresent && r.NewType != "" {
			newType = r.NewType
		}
		resources[r.LogicalID] = map[string]any{"changeImpact": referenceImpact[impact], "oldType": oldType, "newType": newType,
			"isAddition": r.Added(), "isRemoval": r.Removed(), "propertyChanges": props, "otherChanges": others}
	}
	s := d.Security
	return map[string]any{
		"differenceCount": d.DifferenceCount(), "isEmpty": d.IsEmpty(),
		"attributes": section(d.Attributes), "parameters": section(d.Parameters), "outputs": section(d.Outputs),
		"conditions": section(d.Conditions), "mappings": section(d.Mappings), "metadata": section(d.Metadata),
		"unknown": section(d.Unknown), "resources": resources,
		"security": map[string]any{
			"iamStatementsAdded": sortedJSON(asJSONList(s.StatementsAdded)), "iamStatementsRemoved": sortedJSON(asJSONList(s.StatementsRemoved)),
			"managedPoliciesAdded": sortedJSON(asJSONList(s.ManagedPoliciesAdded)), "managedPoliciesRemoved": sortedJSON(asJSONList(s.ManagedPoliciesRemoved)),
			"securityGroupRulesAdded": sortedJSON(asJSONList(s.RulesAdded)), "securityGroupRulesRemoved": sortedJSON(asJSONList(s.RulesRemoved)),
			"ssoPermissionSetsAdded": sortedJSON(asJSONList(s.SSOPermissionSetsAdded)), "ssoPermissionSetsRemoved": sortedJSON(asJSONList(s.SSOPermissionSetsRemoved)),
			"ssoAssignmentsAdded": sortedJSON(asJSONList(s.SSOAssignmentsAdded)), "ssoAssignmentsRemoved": sortedJSON(asJSONList(s.SSOAssignmentsRemoved)),
			"ssoInstanceACAConfigsAdded": sortedJSON(asJSONList(s.SSOACAConfigsAdded)), "ssoInstanceACAConfigsRemoved": sortedJSON(asJSONList(s.SSOACAConfigsRemoved)),
			"permissionsBroadened": s.Broadened(), "permissionsAnyChanges": s.AnyChanges(),
		},
	}
}

// asJSONList round-trips a slice through its JSON form, the shape the reference records.
func asJSONList[T any](xs []T) []any {
	out := []any{}
	for _, x := range xs {
		raw, _ := json.Marshal(x)
		var v any
		_ = json.Unmarshal(raw, &v)
		out = append(out, v)
	}
	return out
}

// sortedJSON sorts objects by their JSON text (keys sorted), as expected.json is.
func sortedJSON(xs []any) []any {
	if xs == nil {
		xs = []any{}
	}
	key := func(v any) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // the reference sorted by JavaScript's JSON text
		_ = enc.Encode(v)
		return b.String()
	}
	sort.SliceStable(xs, func(i, j int) bool { return key(xs[i]) < key(xs[j]) })
	return xs
}

// jsonDiff shows the top-level keys whose values differ.
func jsonDiff(want, got any) string {
	w, _ := want.(map[string]any)
	g, _ := got.(map[string]any)
	var b strings.Builder
	for _, k := range sortedKeysOf(w, g) {
		if !reflect.DeepEqual(w[k], g[k]) {
			wj, _ := json.Marshal(w[k])
			gj, _ := json.Marshal(g[k])
			b.WriteString("  " + k + ":\n    reference: " + string(wj) + "\n    cdkbot:    " + string(gj) + "\n")
		}
	}
	return b.String()
}

func sortedKeysOf(ms ...map[string]any) []string {
	set := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			set[k] = true
		}
	}
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
