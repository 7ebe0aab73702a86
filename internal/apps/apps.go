// Package apps finds the CDK apps of a repository and says which of them a change touches: the
// review of a monorepo fans out to one leg per touched app and environment, and the untouched
// ones are reported unchanged without being synthesized.
//
// It is pure: the files of a revision come through Lister, and what each app's synthesis
// reads comes in as its cache key (package pipeline computes it the way the synthesis does).
package apps

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cdkbot/cdkbot/internal/config"
)

// Lister lists the files of a revision as slash-separated repository paths.
type Lister interface {
	Files(rev string) ([]string, error)
}

// App is one CDK app: a directory with a cdk.json, and the environments it is reviewed in.
type App struct {
	Name string `json:"name"`
	// Dir is the app's directory in the repository ("" for the root).
	Dir          string        `json:"dir"`
	Environments []Environment `json:"environments"`
}

// Environment is one synthesis of an app: the context it is given. The zero Environment is the
// app's own context alone.
type Environment struct {
	Name    string            `json:"name"` // "" without context; else the values joined by "-"
	Context map[string]string `json:"context,omitempty"`
}

// never are directories whose cdk.json files are no app's: what installs and syntheses write.
var never = map[string]bool{"node_modules": true, "cdk.out": true, ".git": true}

// safeDir is what an app's directory may be named: it becomes a job's name, an artifact's and
// a comment key, and pull request code chooses it.
var safeDir = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9._@+-]+(/[A-Za-z0-9._@+-]+)*$`)
})

// Find lists the apps of revision rev: those cfg lists, else every directory with a cdk.json
// but those cfg ignores, each in the environments of cfg's context. A directory cdkbot cannot
// name safely is an error, not skipped: an app left out would go unreviewed.
func Find(l Lister, rev string, cfg config.Apps) ([]App, error) {
	if len(cfg.List) > 0 {
		var out []App
		for _, a := range cfg.List {
			ctx := a.Context
			if ctx == nil {
				ctx = cfg.Context
			}
			out = append(out, App{Name: a.Name, Dir: a.Dir, Environments: Environments(ctx)})
		}
		return out, nil
	}
	files, err := l.Files(rev)
	if err != nil {
		return nil, err
	}
	return Discover(files, cfg.Ignore, cfg.Context)
}

// Discover makes an app of each directory of files that holds a cdk.json, but those below
// node_modules, cdk.out or .git and those an ignore glob matches; apps are named by their
// directory ("root" for the repository's own) and ordered by it.
func Discover(files, ignore []string, ctx map[string][]string) ([]App, error) {
	var out []App
	for _, f := range files {
		if path.Base(f) != "cdk.json" {
			continue
		}
		dir := path.Dir(f)
		if dir == "." {
			dir = ""
		}
		if skipped(dir, ignore) {
			continue
		}
		name := dir
		switch {
		case dir == "":
			name = "root"
		case !safeDir().MatchString(dir) || strings.Contains("/"+dir+"/", "/../") || len(dir) > 200:
			return nil, fmt.Errorf("%q holds a cdk.json but cdkbot cannot name it in a job (letters, digits, "+
				"'.', '_', '@', '+', '-'): rename the directory, or list the apps in .cdkbot.yml (apps.list) "+
				"or ignore it (apps.ignore)", f)
		}
		out = append(out, App{Name: name, Dir: dir, Environments: Environments(ctx)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

func skipped(dir string, ignore []string) bool {
	for _, seg := range strings.Split(dir, "/") {
		if never[seg] {
			return true
		}
	}
	for _, g := range ignore {
		if Match(strings.Trim(g, "/"), dir) {
			return true
		}
	}
	return false
}

// Match reports whether the slash-separated path p matches glob g, whose segments are
// path.Match patterns and where ** matches any number of segments (none included).
func Match(g, p string) bool {
	gs, ps := strings.Split(g, "/"), strings.Split(p, "/")
	if p == "" {
		ps = nil
	}
	var match func(gs, ps []string) bool
	match = func(gs, ps []string) bool {
		switch {
		case len(gs) == 0:
			return len(ps) == 0
		case gs[0] == "**":
			for i := 0; i <= len(ps); i++ {
				if match(gs[1:], ps[i:]) {
					return true
				}
			}
			return false
		case len(ps) == 0:
			return false
		}
		ok, err := path.Match(gs[0], ps[0])
		return ok && err == nil && match(gs[1:], ps[1:])
	}
	return match(gs, ps)
}

// Environments are the combinations of ctx's values, keys in order: {stage: [dev, prod]} is
// stage=dev ("dev") and stage=prod ("prod"). No context is one environment, the zero one.
func Environments(ctx map[string][]string) []Environment {
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	envs := []Environment{{}}
	for _, k := range keys {
		var next []Environment
		for _, e := range envs {
			for _, v := range ctx[k] {
				c := map[string]string{k: v}
				for ek, ev := range e.Context {
					c[ek] = ev
				}
				name := v
				if e.Name != "" {
					name = e.Name + "-" + v
				}
				next = append(next, Environment{Name: name, Context: c})
			}
		}
		envs = next
	}
	return envs
}

// Status is what a change does to one app: a tiny enum with a symbol.
type Status int

// Statuses, in the order a review shows them: touched first.
const (
	Touched   Status = iota // what its synthesis reads changed: reviewed
	Added                   // no such app in the base: reviewed as a first deployment
	Unchanged               // nothing its synthesis reads changed: not synthesized
	// Removed is an app whose cdk.json is only in the base: nothing to synthesize or deploy, and
	// cdkbot deletes no stack, so the stacks it deployed stay (said, never silently dropped).
	Removed
)

var statusNames = [...]string{"touched", "added", "unchanged", "removed"}

func (s Status) String() string { return statusNames[s] }

// Symbol marks the status in text views.
func (s Status) Symbol() string { return [...]string{"~", "+", "=", "-"}[s] }

// rank orders the legs of a plan: reviewed first, then removed, then unchanged.
func (s Status) rank() int { return [...]int{0, 0, 2, 1}[s] }

// MarshalText writes the status's name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status's name.
func (s *Status) UnmarshalText(b []byte) error {
	i := slices.Index(statusNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("%q is not an app status (%s)", b, strings.Join(statusNames[:], ", "))
	}
	*s = Status(i)
	return nil
}

// Leg is one app in one environment: a job of the fan-out when the change touches it.
type Leg struct {
	App         string            `json:"app"`
	Dir         string            `json:"dir"`
	Environment string            `json:"environment"`
	Context     map[string]string `json:"context,omitempty"`
	// Key is the leg's comment key: the review's key, the app and the environment.
	Key    string `json:"key"`
	Status Status `json:"status"`
	Why    string `json:"why"`
}

// Keys are each app's synthesis key at one revision, by app directory ("" where the app has
// no cdk.json at that revision).
type Keys map[string]string

// Plan is the fan-out of one change: every app in every environment, touched ones first.
type Plan struct {
	Key  string `json:"key"`
	Legs []Leg  `json:"legs"`
}

// NewPlan marks each leg of apps touched, added or unchanged by comparing the apps' synthesis
// keys at base and head. everything, when not "", touches every app and says why (the
// configuration every review reads changed).
func NewPlan(key string, list []App, base, head Keys, everything string) Plan {
	p := Plan{Key: key}
	for _, a := range list {
		st, why := Unchanged, "nothing its synthesis reads changed"
		switch {
		case base[a.Dir] == "":
			st, why = Added, "no cdk.json there in the base"
		case everything != "":
			st, why = Touched, everything
		case base[a.Dir] != head[a.Dir]:
			st, why = Touched, "what its synthesis reads changed"
		}
		for _, e := range a.Environments {
			p.Legs = append(p.Legs, Leg{App: a.Name, Dir: a.Dir, Environment: e.Name, Context: e.Context,
				Key: legKey(key, a.Name, e.Name), Status: st, Why: why})
		}
	}
	p.sort()
	return p
}

func (p Plan) sort() {
	sort.SliceStable(p.Legs, func(i, j int) bool { return p.Legs[i].Status.rank() < p.Legs[j].Status.rank() })
}

// RemovedWhy is what a removed app's legs say: what the removal does in AWS (nothing).
const RemovedWhy = "its cdk.json is only in the base: cdkbot synthesizes and deploys nothing for it and deletes no " +
	"stack, so the stacks it deployed stay deployed (delete them with cdk destroy, or in CloudFormation, if the " +
	"removal means it)"

// WithRemoved adds a leg per environment of each app of base (the apps of the base revision)
// that head (the head's apps) lacks: an app removed by the change is reported, not dropped,
// since what it deployed keeps running with nothing left to deploy it.
func (p Plan) WithRemoved(base, head []App) Plan {
	at := map[string]bool{}
	for _, a := range head {
		at[a.Dir] = true
	}
	legs := slices.Clone(p.Legs)
	for _, a := range base {
		if at[a.Dir] {
			continue
		}
		for _, e := range a.Environments {
			legs = append(legs, Leg{App: a.Name, Dir: a.Dir, Environment: e.Name, Context: e.Context,
				Key: legKey(p.Key, a.Name, e.Name), Status: Removed, Why: RemovedWhy})
		}
	}
	p.Legs = legs
	p.sort()
	return p
}

func legKey(key, app, env string) string {
	k := key + "/" + app
	if env != "" {
		k += "/" + env
	}
	return k
}

// Reviewed are the legs the change touches: those the fan-out runs.
func (p Plan) Reviewed() []Leg {
	var out []Leg
	for _, l := range p.Legs {
		if l.Status == Touched || l.Status == Added {
			out = append(out, l)
		}
	}
	return out
}
