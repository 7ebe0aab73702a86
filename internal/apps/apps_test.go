package apps

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/config"
)

type lister map[string][]string

func (l lister) Files(rev string) ([]string, error) {
	if f, ok := l[rev]; ok {
		return f, nil
	}
	return nil, errors.New("no such revision")
}

func dirs(list []App) []string {
	var out []string
	for _, a := range list {
		out = append(out, a.Name+"="+a.Dir)
	}
	return out
}

// Every cdk.json is an app, but those installs and syntheses write and those ignored.
func TestDiscover(t *testing.T) {
	files := []string{
		"cdk.json", "README.md",
		"services/shop/infra/cdk.json", "services/shop/infra/node_modules/aws-cdk-lib/cdk.json",
		"infra/network/cdk.json", "infra/network/cdk.out/cdk.json",
		"examples/hello/cdk.json", "test/fixtures/a/cdk.json", "docs/cdk.json.md",
	}
	got, err := Discover(files, []string{"examples/*", "test/**"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"root=", "infra/network=infra/network", "services/shop/infra=services/shop/infra"}
	if !reflect.DeepEqual(dirs(got), want) {
		t.Errorf("got %v, want %v", dirs(got), want)
	}
}

// A directory pull request code names so that it would break a job (or a shell) fails the
// discovery: skipping it would leave an app unreviewed.
func TestDiscoverRefusesUnsafeNames(t *testing.T) {
	for _, f := range []string{"a b/cdk.json", "x/$(id)/cdk.json", "a\nb/cdk.json", "q\"/cdk.json"} {
		if _, err := Discover([]string{"ok/cdk.json", f}, nil, nil); err == nil || !strings.Contains(err.Error(), "apps.ignore") {
			t.Errorf("%q: got %v", f, err)
		}
		if got, err := Discover([]string{"ok/cdk.json", f}, []string{"**/*"}, nil); err != nil || len(got) != 0 {
			t.Errorf("%q ignored: %v %v", f, got, err)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		g, p string
		ok   bool
	}{
		{"examples/*", "examples/a", true},
		{"examples/*", "examples/a/b", false},
		{"examples/**", "examples/a/b", true},
		{"examples/**", "examples", true},
		{"**/fixtures/**", "x/y/fixtures/z", true},
		{"**", "", true},
		{"infra", "infra/network", false},
		{"[", "[", false},
	} {
		if got := Match(c.g, c.p); got != c.ok {
			t.Errorf("Match(%q, %q) = %v", c.g, c.p, got)
		}
	}
}

func TestEnvironments(t *testing.T) {
	got := Environments(map[string][]string{"stage": {"dev", "prod"}, "region": {"eu"}})
	want := []Environment{
		{Name: "eu-dev", Context: map[string]string{"region": "eu", "stage": "dev"}},
		{Name: "eu-prod", Context: map[string]string{"region": "eu", "stage": "prod"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	if got := Environments(nil); !reflect.DeepEqual(got, []Environment{{}}) {
		t.Errorf("no context: %+v", got)
	}
}

// The configuration's list wins over discovery; an app's own context over the section's.
func TestFind(t *testing.T) {
	l := lister{"head": {"a/cdk.json", "b/cdk.json"}}
	cfg := config.Apps{Context: map[string][]string{"stage": {"dev", "prod"}}}
	got, err := Find(l, "head", cfg)
	if err != nil || len(got) != 2 || len(got[0].Environments) != 2 {
		t.Fatalf("%+v %v", got, err)
	}
	cfg.List = []config.App{{Name: "net", Dir: "infra/net"}, {Name: "web", Dir: "web", Context: map[string][]string{"stage": {"prod"}}}}
	got, err = Find(l, "unknown", cfg) // the list needs no listing
	if err != nil || !reflect.DeepEqual(dirs(got), []string{"net=infra/net", "web=web"}) ||
		len(got[0].Environments) != 2 || len(got[1].Environments) != 1 || got[1].Environments[0].Name != "prod" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := Find(l, "unknown", config.Apps{}); err == nil {
		t.Error("a revision that cannot be listed is an error")
	}
}

// Each app in each environment is a leg with its own key; touched and added legs come first,
// the unchanged are kept (annotated, not dropped) for the comment to list.
func TestNewPlan(t *testing.T) {
	envs := Environments(map[string][]string{"stage": {"dev", "prod"}})
	list := []App{{Name: "a", Dir: "a", Environments: envs}, {Name: "b", Dir: "b", Environments: envs},
		{Name: "c", Dir: "c", Environments: envs}}
	base, head := Keys{"a": "1", "b": "2"}, Keys{"a": "1", "b": "3", "c": "4"}
	p := NewPlan("cdk/review", list, base, head, "")
	var got []string
	for _, l := range p.Legs {
		got = append(got, l.Status.Symbol()+" "+l.Key)
	}
	want := []string{"~ cdk/review/b/dev", "~ cdk/review/b/prod", "+ cdk/review/c/dev", "+ cdk/review/c/prod",
		"= cdk/review/a/dev", "= cdk/review/a/prod"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
	if n := len(p.Reviewed()); n != 4 {
		t.Errorf("%d reviewed legs, want 4", n)
	}
	all := NewPlan("k", list, base, head, ".cdkbot.yml changed")
	if n := len(all.Reviewed()); n != 6 || all.Legs[0].Why != ".cdkbot.yml changed" {
		t.Errorf("everything touched: %d reviewed, %+v", n, all.Legs[0])
	}
	if noEnv := NewPlan("k", []App{{Name: "root", Environments: []Environment{{}}}}, Keys{"": "1"}, Keys{"": "2"}, ""); noEnv.Legs[0].Key != "k/root" {
		t.Errorf("key without an environment: %q", noEnv.Legs[0].Key)
	}
}

func TestStatusText(t *testing.T) {
	for _, s := range []Status{Touched, Added, Unchanged, Removed} {
		b, _ := s.MarshalText()
		var back Status
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("%v: %v %v", s, back, err)
		}
	}
	var s Status
	if err := s.UnmarshalText([]byte("gone")); err == nil {
		t.Error("an unknown status is an error")
	}
}

// An app whose cdk.json only the base has is reported removed, in each of its environments,
// between the reviewed legs and the unchanged ones: never reviewed (nothing to synthesize), never
// dropped (its stacks stay deployed with nothing left to deploy them).
func TestWithRemoved(t *testing.T) {
	envs := Environments(map[string][]string{"stage": {"dev", "prod"}})
	base := []App{{Name: "a", Dir: "a", Environments: envs}, {Name: "old", Dir: "old", Environments: envs},
		{Name: "b", Dir: "b", Environments: []Environment{{}}}}
	head := []App{{Name: "a", Dir: "a", Environments: envs}, {Name: "b", Dir: "b", Environments: []Environment{{}}}}
	p := NewPlan("k", head, Keys{"a": "1", "old": "2", "b": "3"}, Keys{"a": "9", "b": "3"}, "").WithRemoved(base, head)
	var got []string
	for _, l := range p.Legs {
		got = append(got, l.Status.Symbol()+" "+l.Key)
	}
	want := []string{"~ k/a/dev", "~ k/a/prod", "- k/old/dev", "- k/old/prod", "= k/b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if l := p.Legs[2]; l.Dir != "old" || l.Context["stage"] != "dev" || !strings.Contains(l.Why, "deletes no stack") ||
		!strings.Contains(l.Why, "stay deployed") {
		t.Errorf("removed leg %+v", l)
	}
	if n := len(p.Reviewed()); n != 2 {
		t.Errorf("%d legs reviewed, want the two touched: a removed app has nothing to synthesize", n)
	}
	if same := NewPlan("k", head, nil, nil, "").WithRemoved(head, head); len(same.Legs) != 3 {
		t.Errorf("nothing removed: %d legs", len(same.Legs))
	}
}
