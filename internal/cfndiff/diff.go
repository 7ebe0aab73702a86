package cfndiff

import (
	"slices"
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/resourcespec"
)

// Options tune a diff.
type Options struct {
	// Spec is the resource specification; nil means the embedded one.
	Spec *resourcespec.Spec
	// Import marks every resource change as an import (cdk import).
	Import bool
	// OldTemplates and NewTemplates replace stack templates read from an assembly, by qualified
	// stack id: the templates after policy aspects changed them are what gets deployed.
	OldTemplates, NewTemplates map[string]*cfn.Object
	// Inputs are values from outside the template that change at deploy time, each with why:
	// ChangedExports by export name (read with Fn::ImportValue), ChangedOutputs by
	// "NestedStackLogicalID.Outputs.Name" (read with Fn::GetAtt). A property that reads one changes
	// as if edited, with the impact the specification gives it, and replacement spreads from
	// there as inside a template: the blast radius crosses stack boundaries.
	ChangedExports, ChangedOutputs map[string]string
	// ChangedParameters are a nested stack's parameters whose value the parent changes, by name:
	// resources that Ref them change as if edited.
	ChangedParameters map[string]string
	// ReleaseTemplates lets DiffAssemblies drop each stack's parsed templates once its diff and
	// what the pass across stacks needs of them are taken: memory is bounded by the largest
	// stack, not the assembly. StackDiff.OldTemplate is then nil, and a resource both sides
	// have keeps of its bodies (Old, New) only the policies.
	ReleaseTemplates bool
	// KeepTemplates names the stacks (by qualified id) whose templates DiffAssemblies keeps
	// whole although ReleaseTemplates is set: those compared again afterwards.
	KeepTemplates func(id string) bool
}

// TemplateDiff is every difference between two templates.
type TemplateDiff struct {
	// Attributes holds AWSTemplateFormatVersion, Description and Transform changes.
	Attributes SectionDiff
	Parameters SectionDiff
	Mappings   SectionDiff
	Conditions SectionDiff
	Outputs    SectionDiff
	Metadata   SectionDiff // template-level Metadata keys
	Unknown    SectionDiff // any other top-level key, e.g. Rules, Hooks
	// Resources that differ, sorted by logical id, including resources that do not change
	// themselves but are replaced or updated because a resource they reference is replaced.
	Resources []*ResourceChange
	Security  Security
}

// SectionDiff lists the changed keys of a template section, sorted by key.
type SectionDiff struct{ Changes []ValueChange }

// ValueChange is one changed key: added (only New), removed (only Old) or updated.
type ValueChange struct {
	Key                    string
	Old, New               any
	OldPresent, NewPresent bool
}

// ChangeKind says whether a key was added, removed or updated.
type ChangeKind uint8

// Change kinds.
const (
	Added ChangeKind = iota
	Removed
	Updated
)

func (k ChangeKind) String() string { return [...]string{"added", "removed", "updated"}[k] }

// Kind classifies the change.
func (c ValueChange) Kind() ChangeKind {
	switch {
	case !c.OldPresent:
		return Added
	case !c.NewPresent:
		return Removed
	}
	return Updated
}

// Keys returns the keys changed in the given way.
func (s SectionDiff) Keys(kind ChangeKind) []string {
	out := []string{}
	for _, c := range s.Changes {
		if c.Kind() == kind {
			out = append(out, c.Key)
		}
	}
	return out
}

// ResourceChange is what happens to one resource.
type ResourceChange struct {
	LogicalID        string
	OldType, NewType string // "" when the resource is absent on that side (or has no Type)
	Old, New         *cfn.Object
	oldPresent       bool
	newPresent       bool
	Impact           Impact
	// Properties whose value changes or whose value depends on a replaced resource, by name.
	Properties []*PropertyChange
	// Other lists changed keys outside Properties: DependsOn, Metadata, DeletionPolicy, ...
	Other []ValueChange
	// UnknownType is true when the specification does not know the type (Custom::*, ...):
	// property changes are then assumed to update in place.
	UnknownType bool
	// CloudFormation is CloudFormation's own verdict from a change set (True, Conditional or
	// False replacement), when one was asked for; SpecImpact is what the specification said
	// when CloudFormation's verdict differs (NoChange when they agree).
	CloudFormation string
	SpecImpact     Impact
	// RefusedName is the name property (TableName, BucketName, ...) that makes CloudFormation refuse
	// this replacement: it is set, to the same value on both sides, so the new resource would need the
	// old one's name. "" when the replacement can happen.
	RefusedName string
	// Stateless is true when the specification says the old type keeps no data (a topic, a role):
	// destroying it loses no data. False for stateful and unknown types.
	Stateless bool
}

// ApplyVerdict takes CloudFormation's replacement verdict for an updated resource: True
// replaces, Conditional may replace, False updates in place. CloudFormation decides, so its
// verdict wins; it returns true when the specification said otherwise.
func (r *ResourceChange) ApplyVerdict(replacement string) bool {
	want, ok := map[string]Impact{"True": Replace, "Conditional": MayReplace, "False": Update}[replacement]
	if !ok || (r.Impact != Update && r.Impact != MayReplace && r.Impact != Replace) {
		return false
	}
	r.CloudFormation = replacement
	if r.Impact == want {
		return false
	}
	r.SpecImpact, r.Impact = r.Impact, want
	if want != Replace {
		r.RefusedName = "" // not replaced after all, so nothing to refuse
	}
	return true
}

// VerdictNote says where the impact comes from when CloudFormation was asked: "" when it was not.
func (r *ResourceChange) VerdictNote() string {
	if r.CloudFormation == "" {
		return ""
	}
	if r.SpecImpact != NoChange {
		return "CloudFormation's change set says " + r.Impact.String() +
			"; the resource specification said " + r.SpecImpact.String()
	}
	return "confirmed by CloudFormation's change set"
}

// PropertyChange is one top-level property of a resource.
type PropertyChange struct {
	Name                   string
	Old, New               any
	OldPresent, NewPresent bool
	Impact                 Impact
	// Changed is false when the written value is the same but resolves differently because a
	// resource it references is replaced.
	Changed bool
	// ReplacedReferences are replaced resources whose new identity flows into this property.
	ReplacedReferences []string
	// ChangedInputs are values from other stacks this property reads that change: an export it
	// imports, a nested stack's output.
	ChangedInputs []ChangedInput
	// Unknown is true when the specification does not describe the property.
	Unknown bool
}

// ChangedInput is a value from another stack that changes at deploy time.
type ChangedInput struct {
	Name string `json:"name"` // the export name, or "Nested.Outputs.X"
	Why  string `json:"why"`  // "ShopData: its value changes: Orders is replaced"
}

// Added, Removed report whether the resource is only on one side.
func (r *ResourceChange) Added() bool   { return !r.oldPresent && r.newPresent }
func (r *ResourceChange) Removed() bool { return r.oldPresent && !r.newPresent }

func (r *ResourceChange) typeChanged() bool {
	return r.oldPresent && r.newPresent && r.OldType != r.NewType
}

// differs is the reference's notion of a differing resource (used for the security scan).
func (r *ResourceChange) differs() bool {
	return len(r.changedProperties()) > 0 || len(r.Other) > 0 || r.OldType != r.NewType || r.Added() || r.Removed()
}

func (r *ResourceChange) changedProperties() []*PropertyChange {
	var out []*PropertyChange
	for _, p := range r.Properties {
		if p.Changed {
			out = append(out, p)
		}
	}
	return out
}

func (r *ResourceChange) oldProperties() *cfn.Object { return cfn.AsObject(get(r.Old, "Properties")) }
func (r *ResourceChange) newProperties() *cfn.Object { return cfn.AsObject(get(r.New, "Properties")) }

// Type is the resource's type (the new one, else the old one).
func (r *ResourceChange) Type() string {
	if r.NewType != "" {
		return r.NewType
	}
	return r.OldType
}

// Property returns the change of the named property, or nil.
func (r *ResourceChange) Property(name string) *PropertyChange {
	for _, p := range r.Properties {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// MetadataOnly is true when the change changes nothing in AWS: only the resource's Metadata
// (e.g. aws:cdk:path), which CloudFormation stores, or CDK's own analytics resource
// AWS::CDK::Metadata, whose Analytics string follows the library version.
func (r *ResourceChange) MetadataOnly() bool {
	if r.Type() == "AWS::CDK::Metadata" {
		return true
	}
	if r.Impact != Update || len(r.Properties) > 0 {
		return false
	}
	for _, o := range r.Other {
		if o.Key != "Metadata" {
			return false
		}
	}
	return len(r.Other) > 0
}

// DeletionPolicy and UpdateReplacePolicy as they apply to this change: on removal the old
// template's DeletionPolicy governs; on replacement the new template's UpdateReplacePolicy.
func (r *ResourceChange) DeletionPolicy() string {
	s, _ := get(r.Old, "DeletionPolicy").(string)
	return s
}

// UpdateReplacePolicy is the policy that decides the old physical resource's fate on replacement.
func (r *ResourceChange) UpdateReplacePolicy() string {
	s, _ := get(r.New, "UpdateReplacePolicy").(string)
	return s
}

// Refusal says why CloudFormation will refuse the replacement and how to go ahead, or "" when it
// will not refuse it.
func (r *ResourceChange) Refusal() string {
	if r.RefusedName == "" {
		return ""
	}
	return "CloudFormation will refuse this update: it cannot replace a resource that keeps its name (" +
		r.RefusedName + "); set a new " + r.RefusedName + " or remove it so CloudFormation names it"
}

// Consequence says in words what happens to existing data, for replacements and removals.
func (r *ResourceChange) Consequence() string {
	switch r.Impact {
	case Replace, MayReplace:
		old := "the old resource is deleted"
		switch r.UpdateReplacePolicy() {
		case "Retain":
			old = "the old resource is kept (UpdateReplacePolicy: Retain) and must be cleaned up by hand"
		case "Snapshot":
			old = "a snapshot of the old resource is taken, then it is deleted (UpdateReplacePolicy: Snapshot)"
		}
		if r.RefusedName != "" {
			return r.Refusal() + ", then " + old
		}
		return old
	case Destroy:
		if r.DeletionPolicy() == "Snapshot" {
			return "a snapshot is taken, then the resource is deleted (DeletionPolicy: Snapshot)"
		}
		if r.Stateless {
			return "the resource is deleted"
		}
		return "the resource and its data are deleted"
	case Orphan:
		return "the resource is removed from the stack but kept in AWS (DeletionPolicy: " + r.DeletionPolicy() + ")"
	}
	return ""
}

// Summary counts resource changes by impact.
func (d *TemplateDiff) Summary() map[Impact]int {
	out := map[Impact]int{}
	for _, r := range d.Resources {
		out[r.Impact]++
	}
	return out
}

// DifferenceCount is the number of changed entries (what `--fail` tests).
func (d *TemplateDiff) DifferenceCount() int {
	return len(d.Attributes.Changes) + len(d.Parameters.Changes) + len(d.Mappings.Changes) + len(d.Conditions.Changes) +
		len(d.Outputs.Changes) + len(d.Metadata.Changes) + len(d.Unknown.Changes) + len(d.Resources)
}

// Significant is true when the templates differ in more than metadata-only resource changes.
func (d *TemplateDiff) Significant() bool {
	n := d.DifferenceCount()
	for _, r := range d.Resources {
		if r.MetadataOnly() {
			n--
		}
	}
	return n > 0
}

// IsEmpty is true when the templates are equivalent.
func (d *TemplateDiff) IsEmpty() bool { return d.DifferenceCount() == 0 }

// Diff compares the deployed template old with the new one. nil stands for "no stack".
func Diff(old, new *cfn.Object, opts Options) *TemplateDiff {
	spec := opts.Spec
	if spec == nil {
		spec = resourcespec.Default()
	}
	d := &TemplateDiff{}
	keys := unionKeys(old, new)
	sort.Strings(keys)
	var resources []*ResourceChange
	for _, k := range keys {
		ov, oOK := old.Get(k)
		nv, nOK := new.Get(k)
		if oOK && nOK && Equal(ov, nv) && (k != "Resources" || !readsChangedInput(nv, opts)) {
			continue
		}
		switch k {
		case "AWSTemplateFormatVersion", "Description", "Transform":
			d.Attributes.Changes = append(d.Attributes.Changes, ValueChange{Key: k, Old: ov, New: nv,
				OldPresent: oOK && ov != nil, NewPresent: nOK && nv != nil})
		case "Parameters":
			d.Parameters = keyedDiff(ov, nv)
		case "Mappings":
			d.Mappings = keyedDiff(ov, nv)
		case "Conditions":
			d.Conditions = keyedDiff(ov, nv)
		case "Outputs":
			d.Outputs = keyedDiff(ov, nv)
		case "Metadata":
			d.Metadata = keyedDiff(ov, nv)
		case "Resources":
			resources = diffResources(cfn.AsObject(ov), cfn.AsObject(nv), spec, opts)
		default:
			d.Unknown.Changes = append(d.Unknown.Changes, ValueChange{Key: k, Old: ov, New: nv,
				OldPresent: oOK, NewPresent: nOK})
		}
	}
	d.Security = securityChanges(resources, spec)
	if opts.Import {
		for _, r := range resources {
			r.Impact = Import
		}
	}
	for _, r := range resources {
		if r.Impact != NoChange || r.differs() {
			d.Resources = append(d.Resources, r)
		}
	}
	return d
}

func unionKeys(a, b *cfn.Object) []string {
	keys := append([]string(nil), a.Keys()...)
	for _, k := range b.Keys() {
		if !a.Has(k) {
			keys = append(keys, k)
		}
	}
	return keys
}

func keyedDiff(ov, nv any) SectionDiff {
	o, n := cfn.AsObject(ov), cfn.AsObject(nv)
	var s SectionDiff
	keys := unionKeys(o, n)
	sort.Strings(keys)
	for _, k := range keys {
		a, aOK := o.Get(k)
		b, bOK := n.Get(k)
		if aOK && bOK && Equal(a, b) {
			continue
		}
		s.Changes = append(s.Changes, ValueChange{Key: k, Old: a, New: b, OldPresent: aOK, NewPresent: bOK})
	}
	return s
}

// diffResources diffs every resource, then propagates replacements.
func diffResources(old, new *cfn.Object, spec *resourcespec.Spec, opts Options) []*ResourceChange {
	ids := unionKeys(old, new)
	sort.Strings(ids)
	all := make(map[string]*ResourceChange, len(ids))
	out := make([]*ResourceChange, 0, len(ids))
	for _, id := range ids {
		ov, oOK := old.Get(id)
		nv, nOK := new.Get(id)
		rc := diffResource(id, ov, nv, oOK, nOK, spec)
		all[id] = rc
		out = append(out, rc)
	}
	propagate(out, all, spec, opts)
	return out
}

func typeOf(v any) string {
	s, _ := get(v, "Type").(string)
	return s
}

func diffResource(id string, ov, nv any, oOK, nOK bool, spec *resourcespec.Spec) *ResourceChange {
	rc := &ResourceChange{LogicalID: id, Old: cfn.AsObject(ov), New: cfn.AsObject(nv), oldPresent: oOK, newPresent: nOK,
		OldType: typeOf(ov), NewType: typeOf(nv)}
	if t := spec.Type(rc.OldType); t != nil && !t.Stateful {
		rc.Stateless = true
	}
	if strings.HasPrefix(id, "Fn::ForEach::") {
		// A ForEach loop is a macro, not a resource: it is compared as one opaque value.
		if oOK {
			rc.OldType = "Fn::ForEach"
		}
		if nOK {
			rc.NewType = "Fn::ForEach"
		}
		if !(oOK && nOK && Equal(ov, nv)) {
			rc.Other = append(rc.Other, ValueChange{Key: "Value", Old: ov, New: nv, OldPresent: oOK, NewPresent: nOK})
		}
		rc.Impact = rc.ownImpact()
		return rc
	}
	if oOK && nOK && rc.OldType != "" && rc.OldType == rc.NewType {
		t := spec.Type(rc.OldType)
		rc.UnknownType = t == nil
		op, np := rc.oldProperties(), rc.newProperties()
		for _, name := range unionKeys(op, np) {
			a, aOK := op.Get(name)
			b, bOK := np.Get(name)
			if aOK && bOK && Equal(a, b) {
				continue
			}
			impact, unknown := propertyImpact(t, name)
			rc.Properties = append(rc.Properties, &PropertyChange{Name: name, Old: a, New: b, OldPresent: aOK, NewPresent: bOK,
				Impact: impact, Changed: true, Unknown: unknown})
		}
		sort.Slice(rc.Properties, func(i, j int) bool { return rc.Properties[i].Name < rc.Properties[j].Name })
		for _, k := range unionKeys(rc.Old, rc.New) {
			if k == "Properties" {
				continue
			}
			a, aOK := rc.Old.Get(k)
			b, bOK := rc.New.Get(k)
			if aOK && bOK && Equal(a, b) {
				continue
			}
			rc.Other = append(rc.Other, ValueChange{Key: k, Old: a, New: b, OldPresent: aOK, NewPresent: bOK})
		}
		sort.Slice(rc.Other, func(i, j int) bool { return rc.Other[i].Key < rc.Other[j].Key })
	}
	rc.Impact = rc.ownImpact()
	return rc
}

// propertyImpact is what changing the property does, per the specification. Properties the
// specification does not describe are assumed to update in place, and say so.
func propertyImpact(t *resourcespec.Type, name string) (Impact, bool) {
	p, ok := t.Property(name)
	if !ok {
		return Update, true
	}
	switch p.Behaviour {
	case resourcespec.Immutable:
		return Replace, false
	case resourcespec.Conditional:
		return MayReplace, false
	}
	return Update, false
}

func (r *ResourceChange) ownImpact() Impact {
	switch {
	case !r.oldPresent && r.newPresent:
		return Create
	case r.oldPresent && !r.newPresent:
		switch r.DeletionPolicy() {
		case "Retain", "RetainExceptOnCreate":
			return Orphan
		}
		return Destroy
	case r.OldType != r.NewType:
		return Replace
	}
	impact := NoChange
	if len(r.Other) > 0 {
		impact = Update
	}
	for _, p := range r.Properties {
		impact = worse(impact, p.Impact)
	}
	return impact
}

// touch records that property name of rc resolves anew (a resource it references is replaced, or
// an input from another stack changes), with the impact the specification gives the property.
func touch(rc *ResourceChange, name string, spec *resourcespec.Spec) *PropertyChange {
	pc := rc.Property(name)
	if pc == nil {
		ov, oOK := rc.oldProperties().Get(name)
		nv, nOK := rc.newProperties().Get(name)
		pc = &PropertyChange{Name: name, Old: ov, New: nv, OldPresent: oOK, NewPresent: nOK}
		rc.Properties = append(rc.Properties, pc)
		sort.Slice(rc.Properties, func(i, j int) bool { return rc.Properties[i].Name < rc.Properties[j].Name })
	}
	impact, unknown := propertyImpact(spec.Type(rc.NewType), name)
	pc.Impact = worse(pc.Impact, impact)
	pc.Unknown = pc.Unknown || unknown
	rc.UnknownType = spec.Type(rc.NewType) == nil
	rc.Impact = rc.ownImpact()
	return pc
}

// changedInputs says which changed inputs from other stacks v reads.
func changedInputs(v any, opts Options) []ChangedInput {
	if len(opts.ChangedExports) == 0 && len(opts.ChangedOutputs) == 0 && len(opts.ChangedParameters) == 0 {
		return nil
	}
	var out []ChangedInput
	for _, name := range cfn.ImportNames(v) {
		if why, ok := opts.ChangedExports[name]; ok {
			out = append(out, ChangedInput{Name: name, Why: why})
		}
	}
	for _, ref := range cfn.References(v) {
		if why, ok := opts.ChangedParameters[ref.Target]; ok && ref.Kind == cfn.RefRef {
			out = append(out, ChangedInput{Name: "parameter " + ref.Target, Why: why})
		}
		if ref.Kind == cfn.RefGetAtt && strings.HasPrefix(ref.Attribute, "Outputs.") {
			if why, ok := opts.ChangedOutputs[ref.Target+"."+ref.Attribute]; ok {
				out = append(out, ChangedInput{Name: ref.Target + "." + ref.Attribute, Why: why})
			}
		}
	}
	return out
}

// readsChangedInput is true when some resource of the Resources section reads a changed input.
func readsChangedInput(resources any, opts Options) bool {
	return len(changedInputs(resources, opts)) > 0
}

// use is one property of one resource that references another resource.
type use struct {
	resource string
	property string
}

// propagate spreads replacements to a fixed point: when a resource is replaced, its physical id
// and attributes change, so every property that references it (through Ref, Fn::GetAtt,
// Fn::Sub, or inside any other intrinsic) changes too, and that change has the impact the
// specification gives that property, which can replace the referencing resource in turn.
// A reverse index makes this linear in the number of references.
func propagate(changes []*ResourceChange, byID map[string]*ResourceChange, spec *resourcespec.Spec, opts Options) {
	users := map[string][]use{}
	for _, rc := range changes {
		if !rc.oldPresent || !rc.newPresent || rc.typeChanged() {
			continue // created, destroyed or replaced anyway
		}
		props := rc.newProperties()
		for _, name := range props.Keys() {
			v, _ := props.Get(name)
			seen := map[string]bool{}
			for _, ref := range cfn.References(v) {
				if ref.Target == rc.LogicalID || seen[ref.Target] {
					continue
				}
				if _, ok := byID[ref.Target]; !ok {
					continue
				}
				seen[ref.Target] = true
				users[ref.Target] = append(users[ref.Target], use{rc.LogicalID, name})
			}
		}
	}
	// Inputs from other stacks that change seed the spread like a replaced resource would.
	hasInputs := len(opts.ChangedExports)+len(opts.ChangedOutputs)+len(opts.ChangedParameters) > 0
	for _, rc := range changes {
		if !hasInputs {
			break
		}
		if !rc.oldPresent || !rc.newPresent || rc.typeChanged() {
			continue
		}
		props := rc.newProperties()
		for _, name := range props.Keys() {
			v, _ := props.Get(name)
			for _, in := range changedInputs(v, opts) {
				pc := touch(rc, name, spec)
				if !slices.Contains(pc.ChangedInputs, in) {
					pc.ChangedInputs = append(pc.ChangedInputs, in)
				}
			}
		}
	}
	var queue []string
	queued := map[string]bool{}
	for _, rc := range changes {
		if rc.Impact == Replace && rc.oldPresent && rc.newPresent {
			queue = append(queue, rc.LogicalID)
			queued[rc.LogicalID] = true
		}
	}
	for len(queue) > 0 {
		replaced := queue[0]
		queue = queue[1:]
		if refusedName(byID[replaced]) != "" {
			// CloudFormation refuses the replacement, so the resource keeps its identity (its name,
			// hence its ARN) and nothing that reads it resolves anew.
			continue
		}
		for _, u := range users[replaced] {
			rc := byID[u.resource]
			if pc := touch(rc, u.property, spec); !slices.Contains(pc.ReplacedReferences, replaced) {
				pc.ReplacedReferences = append(pc.ReplacedReferences, replaced)
			}
			if rc.Impact == Replace && !queued[rc.LogicalID] {
				queued[rc.LogicalID] = true
				queue = append(queue, rc.LogicalID)
			}
		}
	}
	for _, rc := range changes {
		rc.RefusedName = refusedName(rc)
	}
}

// refusedName is the name property that makes CloudFormation refuse rc's replacement: set to the
// same value on both sides (written alike, reading nothing replaced or changed), or "" when rc is
// not replaced or can be (no name, a new name, or the name removed so CloudFormation names it).
func refusedName(rc *ResourceChange) string {
	if rc.Impact != Replace || !rc.oldPresent || !rc.newPresent || rc.typeChanged() {
		return ""
	}
	prop := resourcespec.NameProperty(rc.NewType)
	if prop == "" {
		return ""
	}
	a, aOK := rc.oldProperties().Get(prop)
	b, bOK := rc.newProperties().Get(prop)
	if !aOK || !bOK || !Equal(a, b) {
		return ""
	}
	if pc := rc.Property(prop); pc != nil && (len(pc.ReplacedReferences) > 0 || len(pc.ChangedInputs) > 0) {
		return ""
	}
	return prop
}
