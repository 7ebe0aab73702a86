package failure

import (
	"errors"
	"fmt"
	"testing"
)

// A kind holds through wrapping and joining: the exit-code table sees a usage error wrapped in
// an operation error as both, and checks the kinds in its own order.
func TestIs(t *testing.T) {
	t.Parallel()
	usage := Usagef("--stacks %q is not a valid glob", "[")
	wrapped := fmt.Errorf("review: %w", usage)
	both := OperationErr(wrapped)
	joined := errors.Join(errors.New("plain"), InputErr(errors.New("bad template")))
	for _, c := range []struct {
		err  error
		kind Kind
		want bool
	}{
		{usage, Usage, true}, {wrapped, Usage, true}, {both, Usage, true}, {both, Operation, true},
		{both, Input, false}, {joined, Input, true}, {joined, Usage, false},
		{Blocked, Verdict, true}, {fmt.Errorf("gate: %w", Blocked), Verdict, true},
		{errors.New("plain"), Operation, false}, {nil, Usage, false},
	} {
		if got := Is(c.err, c.kind); got != c.want {
			t.Errorf("Is(%v, %s) = %v", c.err, c.kind, got)
		}
	}
	if usage.Error() != `--stacks "[" is not a valid glob` || !errors.Is(fmt.Errorf("x: %w", Blocked), Blocked) {
		t.Error("messages or identity changed by the kind")
	}
}
