package deploy

import (
	"context"

	"github.com/cdkbot/cdkbot/internal/deployplan"
)

// Skipped is a stack not deployed because a stack it depends on failed or was skipped.
const Skipped Result = "skipped"

// Run deploys the plan's stacks in its order, one at a time. A failure skips the stacks that
// depend on it, directly or not, while independent stacks still deploy; the first error is
// returned with every outcome.
func (d *Deployer) Run(ctx context.Context, p *deployplan.Plan) ([]Outcome, error) {
	var outcomes []Outcome
	var first error
	bad := map[string]bool{} // failed or skipped
	for _, s := range p.Stacks {
		blocked := ctx.Err() != nil
		for _, dep := range s.DependsOn {
			blocked = blocked || bad[dep]
		}
		if blocked {
			bad[s.ID] = true
			outcomes = append(outcomes, Outcome{Stack: s.ID, Result: Skipped})
			continue
		}
		out, err := d.Deploy(ctx, s)
		outcomes = append(outcomes, out)
		if err != nil {
			bad[s.ID] = true
			if first == nil {
				first = err
			}
		}
	}
	return outcomes, first
}
