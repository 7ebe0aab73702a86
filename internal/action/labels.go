package action

import (
	"context"
	"slices"

	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/pullrequest"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/review"
)

// ResultLabels are the labels (pipeline.ResultLabelNames) a review's verdict puts on its pull
// request: blocked or needs-approval from the verdict, destroys when resources are destroyed or
// replaced, security when the security-broadening gate triggers (at security-severity or worse),
// whether or not it is enforced.
func ResultLabels(rep *review.Report) []string {
	var out []string
	switch render.ReviewVerdict(rep) {
	case render.Blocked:
		out = append(out, pipeline.LabelBlocked)
	case render.NeedsApproval:
		out = append(out, pipeline.LabelNeedsApproval)
	}
	if c := (render.DiffReport{Stacks: rep.Stacks}).Count(); c.Destroy+c.Replace+c.MayReplace > 0 {
		out = append(out, pipeline.LabelDestroys)
	}
	for _, g := range rep.Gates {
		if g.Name == review.GateSecurityBroadening && g.Triggered {
			out = append(out, pipeline.LabelSecurity)
		}
	}
	return out
}

// setResultLabels makes the pull request's result labels the verdict's: adds those it lacks and
// removes those that no longer hold, leaving every other label alone. Labels are for routing,
// not the verdict (the check run is): GitHub trouble is a warning.
func setResultLabels(ctx context.Context, d Deps, pr pullrequest.Facts, rep *review.Report) {
	want := ResultLabels(rep)
	var add []string
	for _, l := range want {
		if !slices.Contains(pr.Labels, l) {
			add = append(add, l)
		}
	}
	if err := d.GitHub.AddLabels(ctx, pr.Number, add); err != nil {
		d.Runner.Warning("cdkbot: could not label #%d %v: %v", pr.Number, add, err)
	}
	for _, l := range pipeline.ResultLabelNames {
		if slices.Contains(pr.Labels, l) && !slices.Contains(want, l) {
			if err := d.GitHub.RemoveLabel(ctx, pr.Number, l); err != nil {
				d.Runner.Warning("cdkbot: could not remove the label %s from #%d: %v", l, pr.Number, err)
			}
		}
	}
}
