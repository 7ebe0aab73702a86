package cfndiff

import (
	"maps"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// ExportInUse is an export that the change alters or removes while a deployed stack imports it:
// CloudFormation refuses to update or delete an export in use, so the deploy would fail.
type ExportInUse struct {
	Name      string   `json:"name"`
	Why       string   `json:"why"`       // "Topic is replaced", "its value is edited", "removed"
	Importers []string `json:"importers"` // stacks (qualified ids) that import it as deployed
}

// outputChanges says which outputs of a stack resolve to a different value after the change,
// by output logical id, with why: the output is edited or removed, or it reads a resource that is
// replaced (its physical id and attributes change).
func outputChanges(d *TemplateDiff, newT *cfn.Object) map[string]string {
	out := map[string]string{}
	for _, c := range d.Outputs.Changes {
		switch c.Kind() {
		case Removed:
			out[c.Key] = "removed"
		case Updated:
			out[c.Key] = "its value is edited"
		}
	}
	replaced := map[string]Impact{}
	for _, r := range d.Resources {
		if r.RefusedName != "" {
			continue // CloudFormation refuses the replacement: the resource keeps its identity
		}
		if r.Impact.IsReplacement() || r.Impact == Destroy || r.Impact == Orphan {
			replaced[r.LogicalID] = r.Impact
		}
	}
	outputs := cfn.AsObject(get(newT, "Outputs"))
	for _, key := range outputs.Keys() {
		if _, done := out[key]; done {
			continue
		}
		v, _ := outputs.Get(key)
		for _, ref := range cfn.References(get(v, "Value")) {
			switch replaced[ref.Target] {
			case Replace:
				out[key] = ref.Target + " is replaced"
			case MayReplace:
				out[key] = ref.Target + " may be replaced"
			}
			if _, ok := out[key]; ok {
				break
			}
		}
	}
	return out
}

// exportNames maps output logical ids to their literal export names.
func exportNames(t *cfn.Object) map[string]string {
	out := map[string]string{}
	outputs := cfn.AsObject(get(t, "Outputs"))
	for _, key := range outputs.Keys() {
		v, _ := outputs.Get(key)
		if name, ok := get(get(v, "Export"), "Name").(string); ok {
			out[key] = name
		}
	}
	return out
}

// changedExports are a stack's exports whose value changes or that disappear, by export name.
func changedExports(d *TemplateDiff, oldT, newT *cfn.Object) map[string]string {
	oldNames := exportNames(oldT)
	if len(oldNames) == 0 {
		return nil // exported nothing: nothing of it can be in use
	}
	changed := outputChanges(d, newT)
	out := map[string]string{}
	newNames := exportNames(newT)
	for key, name := range oldNames {
		switch {
		case newNames[key] != name:
			out[name] = "removed"
		case changed[key] != "":
			out[name] = changed[key]
		}
	}
	return out
}

// nestedOutputChanges are the changed outputs of a stack's nested stacks, keyed as the parent
// reads them: "NestedLogicalID.Outputs.Name".
func nestedOutputChanges(nested []*StackDiff) map[string]string {
	out := map[string]string{}
	for _, n := range nested {
		id := n.StackName // the nested stack's logical id in its parent
		for key, why := range outputChanges(n.Diff, n.newT) {
			out[id+".Outputs."+key] = "nested stack " + id + ": " + why
		}
	}
	return out
}

// exportsInUse lists a stack's changed exports that deployed stacks (other than itself) import.
func exportsInUse(self string, changed map[string]string, deployed map[string][]string) []ExportInUse {
	var out []ExportInUse
	for _, name := range slices.Sorted(maps.Keys(changed)) {
		var users []string
		for _, u := range deployed[name] {
			if u != self {
				users = append(users, u)
			}
		}
		if len(users) > 0 {
			out = append(out, ExportInUse{Name: name, Why: changed[name], Importers: users})
		}
	}
	return out // by name: the names were walked in order
}

// String is the finding as a reviewer reads it.
func (e ExportInUse) String() string {
	return "export " + e.Name + " (" + e.Why + ") is imported by " + strings.Join(e.Importers, ", ") +
		": CloudFormation refuses to change an export in use. Deploy in two steps: first stop importing it, then change it"
}
