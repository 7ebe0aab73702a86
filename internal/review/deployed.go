package review

import (
	"maps"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/stackstate"
)

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

// compareDeployed states, for each stack read, whether what runs is the base. The base's side
// of each comparison is the template the review's diff compared against (policy mutations
// applied, nested stacks included), so nothing is read or parsed again.
func compareDeployed(in Input, stacks []*cfndiff.StackDiff, opts cfndiff.Options) []Deployed {
	if len(in.Deployed) == 0 {
		return nil
	}
	var out []Deployed
	for _, sd := range stacks {
		d := in.Deployed[sd.ID]
		if d == nil {
			continue
		}
		entry := Deployed{Stack: sd.ID, StackName: sd.StackName}
		switch {
		case d.Err != "":
			entry.State, entry.Note = DeployedUnknown, d.Err
		case !d.Deployed:
			entry.State = DeployedNotDeployed
		default:
			diff := compareTemplates(sd, sd.DisplayName, d.Template, sd.OldTemplate(), opts)
			for _, nested := range sd.All()[1:] {
				rel := strings.TrimPrefix(nested.ID, sd.ID+"/")
				if nd := compareTemplates(nested, rel, d.Nested[rel], nested.OldTemplate(), opts); nd.Changed() {
					diff.Nested = append(diff.Nested, nd)
				}
			}
			if diff.Changed() {
				entry.State, entry.Diff = DeployedDiffers, diff
			} else {
				entry.State = DeployedSame
			}
		}
		out = append(out, entry)
	}
	slices.SortFunc(out, func(a, b Deployed) int { return strings.Compare(a.Stack, b.Stack) })
	return out
}

// compareTemplates diffs what runs with the base's template of the stack (or nested stack) the
// review diffed as sd; an absent side counts as empty.
func compareTemplates(
	sd *cfndiff.StackDiff, name string, running, base *cfn.Object, opts cfndiff.Options,
) *cfndiff.StackDiff {
	if running == nil {
		running = &cfn.Object{}
	}
	if base == nil {
		base = &cfn.Object{} // the base does not have it: all that runs is extra
	}
	out := cfndiff.DiffTemplates(name, running, base, cfndiff.Options{Spec: opts.Spec})
	out.ID, out.StackName, out.Environment = sd.ID, sd.StackName, sd.Environment
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

// StackDrift is a stack's drifted resources.
type StackDrift struct {
	Stack     string               `json:"stack"`
	Resources []stackstate.Drifted `json:"resources"`
}

func stackDrifts(in map[string][]stackstate.Drifted) []StackDrift {
	var out []StackDrift
	for _, id := range slices.Sorted(maps.Keys(in)) {
		if len(in[id]) > 0 {
			rs := slices.Clone(in[id])
			slices.SortFunc(rs, func(a, b stackstate.Drifted) int { return strings.Compare(a.LogicalID, b.LogicalID) })
			out = append(out, StackDrift{Stack: id, Resources: rs})
		}
	}
	return out
}
