// Package cfnstatus reads CloudFormation's answers the same way wherever cdkbot asks them
// (deploying, and reviewing against what runs): whether a stack exists, whether a change set
// has nothing to do, and how long to wait before asking again.
package cfnstatus

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/aws/smithy-go"
)

// StackMissing is CloudFormation's answer for a stack that does not exist.
func StackMissing(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "ValidationError" &&
		strings.Contains(api.ErrorMessage(), "does not exist")
}

// NoChanges is true for the reason CloudFormation fails a change set that would change nothing.
func NoChanges(reason string) bool {
	return strings.Contains(reason, "didn't contain changes") || strings.Contains(reason, "No updates are to be performed")
}

// Poller waits between status checks: the interval starts at its minimum (a fast first look),
// grows by half while nothing happens up to its maximum, and stays at twice the minimum while
// there is progress to show.
type Poller struct{ next, min, max time.Duration }

// NewPoller starts a schedule between lo and hi.
func NewPoller(lo, hi time.Duration) *Poller {
	return &Poller{next: lo, min: lo, max: hi}
}

// Step returns how long to wait now and sets the following interval.
func (p *Poller) Step(progressed bool) time.Duration {
	now := p.next
	if progressed {
		now = min(now, 2*p.min) // events are coming: look again soon
		p.next = min(p.max, 2*p.min)
	} else {
		p.next = min(p.max, p.next+p.next/2)
	}
	return now
}

// Wait waits for the next step, or until ctx ends.
func (p *Poller) Wait(ctx context.Context, progressed bool) error {
	t := time.NewTimer(p.Step(progressed))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
