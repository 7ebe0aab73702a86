package review

import (
	"maps"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

// DeployedStack is what CloudFormation holds for one stack, read through its lookup role.
type DeployedStack struct {
	Deployed bool        // false: no such stack, or only a change set never executed
	Template *cfn.Object // the template the stack runs, when Deployed
	// Nested are the templates its nested stacks run, by logical id ("Child/Grandchild" deeper).
	Nested map[string]*cfn.Object
	Err    string // why it could not be read; the review says so and goes on
}

// Deployed states, from the deployed stack's point of view.
const (
	DeployedSame        = "same"         // runs what the base would deploy: nothing to say
	DeployedDiffers     = "differs"      // runs something else: a console change, a failed deploy, another branch
	DeployedNotDeployed = "not-deployed" // no such stack yet
	DeployedUnknown     = "unknown"      // could not be read
)

// Deployed compares what one stack runs with the base the change is reviewed against.
type Deployed struct {
	Stack     string `json:"stack"`
	StackName string `json:"stackName"`
	State     string `json:"state"`
	Note      string `json:"note,omitempty"`
	// Diff goes from what runs to the base: what the base's next deploy changes too, besides
	// the pull request's own change.
	Diff *cfndiff.StackDiff `json:"-"`
}

// compareDeployed states, for each stack read, whether what runs is the base.
func compareDeployed(in Input, base map[string]*cfn.Object, opts cfndiff.Options) []Deployed {
	if len(in.Deployed) == 0 {
		return nil
	}
	byID := map[string]*assembly.Stack{}
	for _, a := range []*assembly.Assembly{in.Head, in.Base} {
		if a == nil {
			continue
		}
		for _, s := range a.AllStacks() {
			if _, ok := byID[s.QualifiedID()]; !ok {
				byID[s.QualifiedID()] = s
			}
		}
	}
	var out []Deployed
	for _, id := range slices.Sorted(maps.Keys(in.Deployed)) {
		d, s := in.Deployed[id], byID[id]
		if s == nil {
			continue
		}
		entry := Deployed{Stack: id, StackName: s.StackName}
		switch {
		case d.Err != "":
			entry.State, entry.Note = DeployedUnknown, d.Err
		case !d.Deployed:
			entry.State = DeployedNotDeployed
		default:
			baseT := base[id]
			if baseT == nil {
				baseT = &cfn.Object{} // the base does not have the stack: all it runs is extra
			}
			sd := cfndiff.DiffTemplates(s.DisplayName, d.Template, baseT, cfndiff.Options{Spec: opts.Spec})
			sd.ID, sd.StackName, sd.Environment = id, s.StackName, s.Environment.String()
			sd.Nested = compareNested(in.Base, id, baseT, d.Nested, opts)
			if sd.Changed() {
				entry.State, entry.Diff = DeployedDiffers, sd
			} else {
				entry.State = DeployedSame
			}
		}
		out = append(out, entry)
	}
	return out
}

// baseTemplates are the base's templates as reviewed: with the policy's mutations, as cdkbot
// deploys them.
func baseTemplates(in Input, mutated map[string]*cfn.Object) map[string]*cfn.Object {
	out := map[string]*cfn.Object{}
	if in.Base == nil {
		return out
	}
	for _, s := range in.Base.AllStacks() {
		id := s.QualifiedID()
		if in.Deployed[id] == nil {
			continue
		}
		if t, ok := mutated[id]; ok {
			out[id] = t
			continue
		}
		if raw, err := s.TemplateBytes(); err == nil {
			if t, err := cfn.Parse(raw); err == nil {
				out[id] = t
			}
		}
	}
	return out
}

// DeployedSummary says in a line what differs between what runs and the base ("" when nothing does).
func DeployedSummary(ds []Deployed) string {
	var differ, missing, unknown []string
	for _, d := range ds {
		switch d.State {
		case DeployedDiffers:
			differ = append(differ, d.Stack)
		case DeployedNotDeployed:
			missing = append(missing, d.Stack)
		case DeployedUnknown:
			unknown = append(unknown, d.Stack)
		}
	}
	var parts []string
	if len(differ) > 0 {
		parts = append(parts, "deployed differs from the base: "+strings.Join(differ, ", "))
	}
	if len(missing) > 0 {
		parts = append(parts, "not deployed yet: "+strings.Join(missing, ", "))
	}
	if len(unknown) > 0 {
		parts = append(parts, "could not read what is deployed: "+strings.Join(unknown, ", "))
	}
	return strings.Join(parts, "; ")
}

// applyVerdicts puts CloudFormation's own replacement verdicts on the head's resources.
func applyVerdicts(stacks []*cfndiff.StackDiff, verdicts map[string]map[string]string) {
	for _, sd := range stacks {
		byID := verdicts[sd.ID]
		if byID == nil {
			continue
		}
		for _, r := range sd.Diff.Resources {
			if v, ok := byID[r.LogicalID]; ok {
				r.ApplyVerdict(v)
			}
		}
	}
}

// Drifted is a resource changed or deleted outside CloudFormation.
type Drifted struct {
	LogicalID   string               `json:"logicalId"`
	Type        string               `json:"type"`
	Status      string               `json:"status"` // MODIFIED or DELETED
	Differences []PropertyDifference `json:"differences,omitempty"`
}

// PropertyDifference is one property that is not what the stack set.
type PropertyDifference struct {
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Kind     string `json:"kind"` // ADD, REMOVE, NOT_EQUAL
}

// StackDrift is a stack's drifted resources.
type StackDrift struct {
	Stack     string    `json:"stack"`
	Resources []Drifted `json:"resources"`
}

// Summary says in a few words how the resource drifted.
func (d Drifted) Summary() string {
	if d.Status == "DELETED" {
		return "deleted outside CloudFormation"
	}
	var paths []string
	for _, p := range d.Differences {
		paths = append(paths, p.Path)
	}
	if len(paths) == 0 {
		return "changed outside CloudFormation"
	}
	return "changed outside CloudFormation (" + strings.Join(paths, ", ") + ")"
}

func stackDrifts(in map[string][]Drifted) []StackDrift {
	var out []StackDrift
	for _, id := range slices.Sorted(maps.Keys(in)) {
		if len(in[id]) > 0 {
			rs := slices.Clone(in[id])
			slices.SortFunc(rs, func(a, b Drifted) int { return strings.Compare(a.LogicalID, b.LogicalID) })
			out = append(out, StackDrift{Stack: id, Resources: rs})
		}
	}
	return out
}

// compareNested diffs what each nested stack runs with the base's nested template: a nested
// stack changed outside CloudFormation, or left behind by a failed update, shows here.
func compareNested(base *assembly.Assembly, id string, baseT *cfn.Object, running map[string]*cfn.Object, opts cfndiff.Options) []*cfndiff.StackDiff {
	want := map[string]*cfn.Object{}
	if base != nil {
		for _, s := range base.AllStacks() {
			if s.QualifiedID() == id {
				want, _ = cfndiff.NestedTemplates(base, s, baseT)
			}
		}
	}
	names := map[string]bool{}
	for n := range want {
		names[n] = true
	}
	for n := range running {
		names[n] = true
	}
	var out []*cfndiff.StackDiff
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if want[n] == nil {
			continue // not a nested stack cdkbot can see the template of
		}
		got := running[n]
		if got == nil {
			got = &cfn.Object{}
		}
		sd := cfndiff.DiffTemplates(n, got, want[n], cfndiff.Options{Spec: opts.Spec})
		sd.ID, sd.StackName = id+"/"+n, n
		if sd.Changed() {
			out = append(out, sd)
		}
	}
	return out
}
