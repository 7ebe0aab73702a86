package apps

import (
	"reflect"
	"strings"
	"testing"
)

func TestCombine(t *testing.T) {
	envs := Environments(map[string][]string{"stage": {"dev", "prod"}})
	list := []App{{Name: "a", Dir: "a", Environments: envs}, {Name: "b", Dir: "b", Environments: envs},
		{Name: "c", Dir: "c", Environments: envs}}
	p := NewPlan("k", list, Keys{"a": "1", "b": "2", "c": "3"}, Keys{"a": "9", "b": "8", "c": "3"}, "")
	reports := []Report{
		{Key: "k/a/dev", HeadSHA: "h", Source: "1"},
		{Key: "k/a/prod", HeadSHA: "h", Failed: true, Source: "2"},
		{Key: "k/b/dev", HeadSHA: "old", Source: "3"},
		{Key: "k/b/prod", HeadSHA: "h", Source: "4"}, {Key: "k/b/prod", HeadSHA: "h", Source: "5"},
		{Key: "k/z", HeadSHA: "h", Source: "6"},
		{Key: "k/c/dev", HeadSHA: "h", Failed: true, Source: "7"}, // unchanged: its report changes nothing
	}
	c := Combine(p, "h", reports)
	var got []string
	for _, s := range c.Sections {
		got = append(got, s.Key+" "+s.Outcome.String())
	}
	want := []string{"k/a/prod blocked", "k/b/dev invalid", "k/b/prod invalid", "k/a/dev passed",
		"k/c/dev unchanged", "k/c/prod unchanged"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if !c.Failed() || c.Count(Invalid) != 2 || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "6") {
		t.Errorf("failed %v, notes %q", c.Failed(), c.Notes)
	}
}

// A touched leg that sent nothing fails the combined review: fail closed.
func TestCombineMissingFailsClosed(t *testing.T) {
	p := NewPlan("k", []App{{Name: "a", Dir: "a", Environments: []Environment{{}}}}, Keys{"a": "1"}, Keys{"a": "2"}, "")
	c := Combine(p, "h", nil)
	if !c.Failed() || c.Sections[0].Outcome != Missing || c.Sections[0].Problem == "" {
		t.Errorf("%+v", c)
	}
	c = Combine(p, "h", []Report{{Key: "k/a", HeadSHA: "h"}})
	if c.Failed() || c.Sections[0].Outcome != Passed {
		t.Errorf("%+v", c)
	}
	// Nothing touched: nothing to wait for, nothing blocks.
	if c := Combine(NewPlan("k", nil, nil, nil, ""), "h", nil); c.Failed() {
		t.Errorf("empty: %+v", c)
	}
}

// A removed app is its own section, said and not blocking, and a report claiming it is not
// taken: nothing was there to review.
func TestCombineRemoved(t *testing.T) {
	a := []App{{Name: "a", Dir: "a", Environments: []Environment{{}}}}
	gone := []App{{Name: "old", Dir: "old", Environments: []Environment{{}}}}
	p := NewPlan("k", a, Keys{"a": "1", "old": "2"}, Keys{"a": "3"}, "").WithRemoved(append(a, gone...), a)
	c := Combine(p, "h", []Report{{Key: "k/a", HeadSHA: "h", Source: "1"}, {Key: "k/old", HeadSHA: "h", Source: "2"}})
	var got []string
	for _, s := range c.Sections {
		got = append(got, s.Key+" "+s.Outcome.String())
	}
	if want := []string{"k/a passed", "k/old removed"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if c.Failed() || c.Count(Gone) != 1 || c.Sections[1].Review != nil {
		t.Errorf("failed %v, removed %d, review %q", c.Failed(), c.Count(Gone), c.Sections[1].Review)
	}
}
