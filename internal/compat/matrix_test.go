package compat

import "testing"

func TestMatrixHasEveryCombinationOnce(t *testing.T) {
	t.Parallel()
	seen := map[Combination]bool{}
	for _, r := range Matrix {
		if seen[r.Combination] {
			t.Errorf("duplicate row %s", r.Combination)
		}
		seen[r.Combination] = true
		if r.Finding == "" {
			t.Errorf("%s: no finding", r.Combination)
		}
		if (r.Outcome == Fails) != (r.Action != "") {
			t.Errorf("%s: a failing row needs an action and only a failing row has one", r.Combination)
		}
	}
	for _, c := range []Age{Old, New} {
		for _, f := range []Age{Old, New} {
			for _, b := range []Age{Old, New} {
				for _, a := range []Age{Old, New} {
					if !seen[Combination{c, f, b, a}] {
						t.Errorf("missing %s", Combination{c, f, b, a})
					}
				}
			}
		}
	}
}

func TestMatrixRules(t *testing.T) {
	t.Parallel()
	for _, r := range Matrix {
		c := r.Combination
		var want Outcome
		switch {
		case c.Framework == Old || c.App == Old:
			// An old framework, or an app that does not opt in, always synthesizes legacy assets,
			// which every CLI deploys and every bootstrap stack (old or new, outputs preserved) serves.
			want = Legacy
		case c.CLI == Old:
			want = Fails // new-style assets need a new CLI
		case c.Bootstrap == Old:
			want = Fails // new-style assets need the new bootstrap stack
		default:
			want = Modern
		}
		if r.Outcome != want {
			t.Errorf("%s: %s, the rules give %s", c, r.Outcome, want)
		}
	}
}

// The design left two rows open ("can this work??"); cdkbot decides them.
func TestDecidedRows(t *testing.T) {
	t.Parallel()
	r := Lookup(Combination{CLI: Old, Framework: New, Bootstrap: Old, App: New})
	if r.Outcome != Fails || !r.Decided || r.Action == "" {
		t.Errorf("old CLI, new framework, old bootstrap, new app must fail with an upgrade-the-CLI action: %+v", r)
	}
	r = Lookup(Combination{CLI: New, Framework: New, Bootstrap: Old, App: New})
	if r.Outcome != Fails || !r.Decided || r.Action == "" {
		t.Errorf("new CLI and framework on an old bootstrap stack must fail with a run-cdk-bootstrap action: %+v", r)
	}
	decided := 0
	for _, r := range Matrix {
		if r.Decided {
			decided++
		}
	}
	if decided != 2 {
		t.Errorf("%d decided rows, the design left 2 open", decided)
	}
}
