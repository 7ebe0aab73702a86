package apps

import "testing"

// A pull request adds root/cdk.json to a repository whose root has one: Discover names both apps
// "root", so both legs get the key review-key/root (and the same job and artifact names). One
// passing report, the new app's, then stands for both legs, and the root app's leg, whose review
// never came back (it failed, or the app made it fail), passes unreviewed. The same happens to
// app svc in environment prod and an app svc/prod without one. Two legs of one key are one leg
// too many: the fan-in must block.
func TestFanInLegKeysCannotCollide(t *testing.T) {
	found, err := Discover([]string{"cdk.json", "root/cdk.json"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := []App{
		{Name: "svc", Dir: "svc", Environments: Environments(map[string][]string{"stage": {"prod"}})},
		{Name: "svc/prod", Dir: "svc/prod", Environments: []Environment{{}}},
	}
	for name, list := range map[string][]App{"discovered": found, "listed": listed} {
		base, head := Keys{}, Keys{}
		for _, a := range list {
			base[a.Dir], head[a.Dir] = "1", "2"
		}
		p := NewPlan("cdk/review", list, base, head, "")
		if len(p.Legs) != 2 {
			t.Fatalf("%s: legs %+v", name, p.Legs)
		}
		c := Combine(p, "abc1234", []Report{{Key: p.Legs[1].Key, HeadSHA: "abc1234", Review: []byte(`{}`), Source: "a/cdkbot-report.json"}})
		if !c.Failed() {
			t.Errorf("%s: one report passes two legs: %q and %q", name, p.Legs[0].Key, p.Legs[1].Key)
		}
	}
}
