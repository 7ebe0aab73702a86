package cfndiff

import (
	"fmt"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
)

// maxNestedDepth bounds nested-stack recursion (CloudFormation itself allows few levels).
const maxNestedDepth = 10

// StackStatus says whether a stack is new, gone, changed or unchanged.
type StackStatus uint8

// Stack statuses.
const (
	StackUnchanged StackStatus = iota
	StackChanged
	StackAdded
	StackRemoved
)

func (s StackStatus) String() string {
	return [...]string{"unchanged", "changed", "added", "removed"}[s]
}

// StackDiff is the diff of one stack: a top-level stack of an assembly, a nested stack (a child
// of the stack that holds its AWS::CloudFormation::Stack resource), or a template file.
type StackDiff struct {
	ID          string // qualified artifact id ("Prod/Api"), or parent ID + "/" + logical id for nested stacks
	StackName   string
	DisplayName string
	Environment string // aws://ACCOUNT/REGION, "" for template files
	Status      StackStatus
	Diff        *TemplateDiff
	Nested      []*StackDiff
	// Paths maps logical ids to construct paths, so reviewers see where a resource comes from.
	Paths map[string]string
	// ExportsInUse are this stack's exports that the change alters or removes while deployed
	// stacks import them: CloudFormation will refuse the update.
	ExportsInUse []ExportInUse

	oldT, newT *cfn.Object // the templates compared, for the cross-stack pass
	facts      stackFacts  // what the cross-stack pass needs once the templates are released
}

// stackFacts are what the pass across stacks reads of a stack's templates, taken right after its
// diff, so that Options.ReleaseTemplates can let the templates go stack by stack.
type stackFacts struct {
	hasOld, hasNew bool
	changed        map[string]string // exports the change alters or removes, with why
	newImports     []string          // exports the new template's resources import
	oldImports     []string          // exports the old template imports (resources and outputs)
}

func factsOf(sd *StackDiff) stackFacts {
	f := stackFacts{hasOld: sd.oldT != nil, hasNew: sd.newT != nil, changed: changedExports(sd.Diff, sd.oldT, sd.newT)}
	if sd.newT != nil {
		f.newImports = cfn.ImportNames(get(sd.newT, "Resources"))
	}
	if sd.oldT != nil {
		for _, section := range []string{"Resources", "Outputs"} {
			f.oldImports = append(f.oldImports, cfn.ImportNames(get(sd.oldT, section))...)
		}
	}
	return f
}

// release drops the parsed templates of the stack and its nested stacks, and of each resource
// both sides have, its bodies but for the policies read once the diff is made (Consequence):
// what a resource's property changes need is in its PropertyChanges. An added or removed
// resource keeps its body, which a move is matched on.
func (s *StackDiff) release() {
	s.oldT, s.newT = nil, nil
	if s.Diff != nil {
		for _, r := range s.Diff.Resources {
			if r.oldPresent && r.newPresent {
				r.Old, r.New = policiesOf(r.Old), policiesOf(r.New)
			}
		}
	}
	for _, n := range s.Nested {
		n.release()
	}
}

// policiesOf is a resource body's DeletionPolicy and UpdateReplacePolicy alone: nil (which reads
// as empty) when it has neither, as most resources.
func policiesOf(body *cfn.Object) *cfn.Object {
	var out *cfn.Object
	for _, k := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
		if v, ok := body.Get(k); ok {
			if out == nil {
				out = cfn.NewObject()
			}
			out.Set(k, v)
		}
	}
	return out
}

// OldTemplate is the template the diff compared against (the base's, as reviewed: with the
// policy's mutations), nil when the old side has no such stack.
func (s *StackDiff) OldTemplate() *cfn.Object { return s.oldT }

// Changed is true when the stack or any nested stack has differences.
func (s *StackDiff) Changed() bool {
	if !s.Diff.IsEmpty() {
		return true
	}
	for _, n := range s.Nested {
		if n.Changed() {
			return true
		}
	}
	return false
}

// ChangedSignificantly is Changed without metadata-only changes (what a headline counts).
func (s *StackDiff) ChangedSignificantly() bool {
	if s.Diff.Significant() {
		return true
	}
	for _, n := range s.Nested {
		if n.ChangedSignificantly() {
			return true
		}
	}
	return false
}

// All returns the stack and its nested stacks, depth first.
func (s *StackDiff) All() []*StackDiff {
	out := []*StackDiff{s}
	for _, n := range s.Nested {
		out = append(out, n.All()...)
	}
	return out
}

// DiffTemplates diffs two template files as one stack named name. Either may be nil (absent).
func DiffTemplates(name string, old, new *cfn.Object, opts Options) *StackDiff {
	sd := &StackDiff{ID: name, StackName: name, DisplayName: name, Diff: Diff(old, new, opts)}
	sd.Status = statusOf(old != nil, new != nil, sd)
	return sd
}

func statusOf(oldOK, newOK bool, sd *StackDiff) StackStatus {
	switch {
	case !oldOK:
		return StackAdded
	case !newOK:
		return StackRemoved
	case sd.Changed():
		return StackChanged
	}
	return StackUnchanged
}

// DiffAssemblies diffs every stack of two assemblies, walking nested assemblies (Stages) and
// nested stacks. Stacks are matched by qualified artifact id, then by stack name; a stack on
// one side only is added or removed. keep selects stacks (nil keeps all). old may be nil (no
// previous deployment).
func DiffAssemblies(old, new *assembly.Assembly, keep func(*assembly.Stack) bool, opts Options) ([]*StackDiff, error) {
	pairs := matchStacks(old, new, keep)
	// Stacks are independent: read, parse and diff them on every core.
	out := make([]*StackDiff, len(pairs))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	diffPair := func(p pair, opts Options) (*StackDiff, error) {
		sd, err := diffStackPair(old, p.old, new, p.new, opts)
		if err != nil {
			return nil, err
		}
		sd.facts = factsOf(sd)
		if opts.ReleaseTemplates && (opts.KeepTemplates == nil || !opts.KeepTemplates(sd.ID)) {
			sd.release()
		}
		return sd, nil
	}
	for i, p := range pairs {
		g.Go(func() error {
			sd, err := diffPair(p, opts)
			out[i] = sd
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Across stacks: an export whose value changes changes every stack that imports it, and a
	// deployed importer makes CloudFormation refuse the exporter's update. Importers are diffed
	// again with the changed exports until nothing more changes (chains of exports).
	// Exports are per account and region: names are matched within one environment.
	changed := map[string]map[string]string{} // environment → export name → why
	collect := func() bool {
		grew := false
		for _, sd := range out {
			for name, why := range sd.facts.changed {
				if changed[sd.Environment] == nil {
					changed[sd.Environment] = map[string]string{}
				}
				if _, ok := changed[sd.Environment][name]; !ok {
					changed[sd.Environment][name], grew = sd.ID+": "+why, true
				}
			}
		}
		return grew
	}
	for round := 0; collect() && round < len(pairs); round++ {
		for i, p := range pairs {
			o := opts
			o.ChangedExports = changed[out[i].Environment]
			if p.new == nil || !out[i].facts.hasNew || !importsAny(out[i].facts.newImports, o.ChangedExports) {
				continue
			}
			sd, err := diffPair(p, o)
			if err != nil {
				return nil, err
			}
			out[i] = sd
		}
	}
	// environment → export name → importing stacks, as deployed (by stack id, each once)
	users := map[string]map[string][]string{}
	for _, sd := range out {
		if !sd.facts.hasOld {
			continue
		}
		if users[sd.Environment] == nil {
			users[sd.Environment] = map[string][]string{}
		}
		for _, name := range sd.facts.oldImports {
			if !slices.Contains(users[sd.Environment][name], sd.ID) {
				users[sd.Environment][name] = append(users[sd.Environment][name], sd.ID)
			}
		}
	}
	for _, byName := range users {
		for _, ids := range byName {
			slices.Sort(ids)
		}
	}
	for _, sd := range out {
		if len(sd.facts.changed) > 0 {
			sd.ExportsInUse = exportsInUse(sd.ID, sd.facts.changed, users[sd.Environment])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// pair is one stack as the two assemblies have it; either side may be nil (added, removed).
type pair struct{ old, new *assembly.Stack }

// id is the qualified id the pair's StackDiff gets.
func (p pair) id() string {
	if p.new != nil {
		return p.new.QualifiedID()
	}
	return p.old.QualifiedID()
}

// matchStacks pairs the stacks of two assemblies: by qualified artifact id, then by stack name;
// new stacks in the new assembly's order, then the removed ones. keep selects stacks (nil keeps all).
func matchStacks(old, new *assembly.Assembly, keep func(*assembly.Stack) bool) []pair {
	var oldStacks []*assembly.Stack
	if old != nil {
		oldStacks = old.AllStacks()
	}
	newStacks := new.AllStacks()
	byID := map[string]*assembly.Stack{}
	byName := map[string]*assembly.Stack{}
	for _, s := range oldStacks {
		byID[s.QualifiedID()] = s
		byName[s.StackName] = s
	}
	matched := map[*assembly.Stack]bool{}
	var pairs []pair
	for _, ns := range newStacks {
		os := byID[ns.QualifiedID()]
		if os == nil {
			os = byName[ns.StackName]
		}
		if os != nil {
			matched[os] = true
		}
		if keep != nil && !keep(ns) && (os == nil || !keep(os)) {
			continue
		}
		pairs = append(pairs, pair{os, ns})
	}
	for _, os := range oldStacks {
		if matched[os] || (keep != nil && !keep(os)) {
			continue
		}
		pairs = append(pairs, pair{os, nil})
	}
	return pairs
}

// importsAny is true when one of the imports is among the named exports.
func importsAny(imports []string, names map[string]string) bool {
	for _, n := range imports {
		if _, ok := names[n]; ok {
			return true
		}
	}
	return false
}

func diffStackPair(
	oa *assembly.Assembly, os *assembly.Stack, na *assembly.Assembly, ns *assembly.Stack, opts Options,
) (*StackDiff, error) {
	var oldT, newT *cfn.Object
	var err error
	if os != nil {
		if oldT = opts.OldTemplates[os.QualifiedID()]; oldT == nil {
			if oldT, err = parseStackTemplate(os); err != nil {
				return nil, err
			}
		}
	}
	if ns != nil {
		if newT = opts.NewTemplates[ns.QualifiedID()]; newT == nil {
			if newT, err = parseStackTemplate(ns); err != nil {
				return nil, err
			}
		}
	}
	info := ns
	if info == nil {
		info = os
	}
	sd := &StackDiff{ID: info.QualifiedID(), StackName: info.StackName, DisplayName: info.DisplayName,
		Environment: info.Environment.String(), Paths: map[string]string{}, oldT: oldT, newT: newT}
	for _, s := range []*assembly.Stack{os, ns} {
		if s != nil {
			for p, id := range s.LogicalIDs() {
				sd.Paths[id] = p
			}
		}
	}
	// Nested stacks first: their changed outputs change what the parent reads from them.
	sd.Nested, err = diffNested(sd.ID, side{oa, os, oldT}, side{na, ns, newT}, opts, 1)
	if err != nil {
		return nil, err
	}
	sd.Diff = Diff(oldT, newT, withNestedOutputs(opts, sd.Nested))
	passParameters(sd, opts, 1)
	sd.Status = statusOf(os != nil, ns != nil, sd)
	return sd, nil
}

// passParameters carries the parent's changes into its nested stacks' parameters: a parameter
// value edited in the parent, or reading a resource the parent replaces, changes every nested
// resource that Refs it. A nested stack so affected is diffed again, and so on down.
func passParameters(parent *StackDiff, opts Options, depth int) {
	if depth > maxNestedDepth || len(parent.Nested) == 0 {
		return
	}
	replaced := map[string]string{}
	for _, r := range parent.Diff.Resources {
		if r.Impact.IsReplacement() && r.RefusedName == "" {
			replaced[r.LogicalID] = r.LogicalID + " is replaced"
		}
	}
	for _, n := range parent.Nested {
		id := n.StackName
		oldP := cfn.AsObject(get(get(get(get(parent.oldT, "Resources"), id), "Properties"), "Parameters"))
		newP := cfn.AsObject(get(get(get(get(parent.newT, "Resources"), id), "Properties"), "Parameters"))
		changed := map[string]string{}
		for _, k := range newP.Keys() {
			nv, _ := newP.Get(k)
			ov, had := oldP.Get(k)
			switch {
			case had && !Equal(ov, nv):
				changed[k] = "edited in the parent"
			default:
				for _, ref := range cfn.References(nv) {
					if why, ok := replaced[ref.Target]; ok {
						changed[k] = "parent: " + why
					}
				}
				for _, in := range changedInputs(nv, opts) {
					changed[k] = "parent reads " + in.Name + ": " + in.Why
				}
			}
		}
		if len(changed) == 0 || n.oldT == nil || n.newT == nil {
			continue
		}
		o := withNestedOutputs(Options{Spec: opts.Spec, Import: opts.Import}, n.Nested)
		o.ChangedParameters = changed
		n.Diff = Diff(n.oldT, n.newT, o)
		n.Status = statusOf(true, true, n)
		passParameters(n, o, depth+1)
	}
}

// withNestedOutputs adds the changed outputs of nested stacks to the inputs a parent reads.
func withNestedOutputs(opts Options, nested []*StackDiff) Options {
	changed := nestedOutputChanges(nested)
	if len(changed) == 0 {
		return opts
	}
	opts.ChangedOutputs = changed
	return opts
}

// side is one version of a stack: its assembly, artifact and parsed template.
type side struct {
	a *assembly.Assembly
	s *assembly.Stack
	t *cfn.Object
}

func parseStackTemplate(s *assembly.Stack) (*cfn.Object, error) {
	raw, err := s.TemplateBytes()
	if err != nil {
		return nil, err
	}
	t, err := cfn.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("template of stack %s (%s): %w", s.QualifiedID(), s.TemplatePath, err)
	}
	return t, nil
}

// diffNested diffs the nested stacks (AWS::CloudFormation::Stack resources whose template is
// in the assembly) of a stack pair.
func diffNested(parentID string, old, new side, opts Options, depth int) ([]*StackDiff, error) {
	if depth > maxNestedDepth {
		return nil, nil
	}
	ids := map[string]bool{}
	for _, sd := range []side{old, new} {
		res := cfn.AsObject(get(sd.t, "Resources"))
		for _, id := range res.Keys() {
			r, _ := res.Get(id)
			if typeOf(r) == "AWS::CloudFormation::Stack" {
				ids[id] = true
			}
		}
	}
	var out []*StackDiff
	for _, id := range sortedSet(ids) {
		ot, err := nestedTemplate(old, id)
		if err != nil {
			return nil, err
		}
		nt, err := nestedTemplate(new, id)
		if err != nil {
			return nil, err
		}
		if ot == nil && nt == nil {
			continue // not a CDK nested stack whose template we have
		}
		sd := &StackDiff{ID: parentID + "/" + id, StackName: id, DisplayName: id,
			Paths: map[string]string{}, oldT: ot, newT: nt}
		sd.Nested, err = diffNested(sd.ID, side{old.a, old.s, ot}, side{new.a, new.s, nt}, opts, depth+1)
		if err != nil {
			return nil, err
		}
		sd.Diff = Diff(ot, nt, withNestedOutputs(Options{Spec: opts.Spec, Import: opts.Import}, sd.Nested))
		passParameters(sd, Options{Spec: opts.Spec, Import: opts.Import}, depth+1)
		sd.Status = statusOf(ot != nil, nt != nil, sd)
		out = append(out, sd)
	}
	return out, nil
}

// nestedTemplate finds the template of nested stack resource id in the assembly: through the
// aws:asset:path metadata the CDK CLI asks for, else by the asset hash in the TemplateURL
// (modern synthesis) or in the asset parameter names it references (legacy synthesis).
func nestedTemplate(sd side, id string) (*cfn.Object, error) {
	if sd.t == nil || sd.a == nil || sd.s == nil {
		return nil, nil
	}
	r := cfn.AsObject(get(get(sd.t, "Resources"), id))
	if r == nil || typeOf(r) != "AWS::CloudFormation::Stack" {
		return nil, nil
	}
	file := ""
	if p, ok := get(get(r, "Metadata"), "aws:asset:path").(string); ok {
		file = path.Join(path.Dir(sd.s.TemplatePath), p)
	} else {
		text := cfn.JSON(get(get(r, "Properties"), "TemplateURL"))
		for _, m := range sd.a.AllAssetManifests() {
			for _, f := range m.Files {
				if f.Source.ResolvedPath != "" && strings.Contains(text, f.ID) {
					file = f.Source.ResolvedPath
				}
			}
		}
		for _, la := range sd.s.LegacyAssets() {
			if strings.Contains(text, la.ID) {
				file = la.ResolvedPath
			}
		}
	}
	if file == "" {
		return nil, nil
	}
	raw, err := sd.a.ReadFile(file, assembly.MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("nested stack %s of %s: read %s: %w", id, sd.s.QualifiedID(), file, err)
	}
	t, err := cfn.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("nested stack %s of %s (%s): %w", id, sd.s.QualifiedID(), file, err)
	}
	return t, nil
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
