package aspects

import (
	"fmt"
	"sort"
	"strings"
)

// Aspect visits constructs; it may read them, change their resources, add nodes and add aspects.
type Aspect interface {
	Visit(n *Node) error
}

// Named is implemented by aspects that have a name for messages.
type Named interface{ Name() string }

// Priorities of the design: mutating aspects run first, read-only ones last.
const (
	PriorityMutating = 200
	PriorityDefault  = 600
	PriorityReadonly = 1000
)

// MaxPasses bounds stabilization: more passes mean aspects keep changing the tree.
const MaxPasses = 100

// MaxDepth bounds the construct tree: an aspect that adds a child to every node it visits
// would otherwise grow the tree forever within one pass.
const MaxDepth = 500

// Application is an aspect applied to a construct and its subtree, with a priority that may be
// changed until the aspect is invoked.
type Application struct {
	Construct *Node
	Aspect    Aspect
	Priority  int
}

func (a *Application) String() string {
	name := fmt.Sprintf("%T", a.Aspect)
	if n, ok := a.Aspect.(Named); ok {
		name = n.Name()
	}
	return fmt.Sprintf("%s (priority %d, on %s)", name, a.Priority, a.Construct)
}

// Applications gives access to the aspects of one construct.
type Applications struct{ node *Node }

// Of returns the aspects of a construct, as Aspects.of(construct) does.
func Of(n *Node) Applications { return Applications{n} }

// Add applies an aspect to the construct and its subtree with the default priority, or the
// given one (a non-negative integer).
func (a Applications) Add(aspect Aspect, priority ...int) (*Application, error) {
	p := PriorityDefault
	if len(priority) > 1 {
		return nil, fmt.Errorf("one priority at most, got %d", len(priority))
	}
	if len(priority) == 1 {
		p = priority[0]
	}
	if p < 0 {
		return nil, fmt.Errorf("aspect priority %d is negative; "+
			"priorities are non-negative integers (200 mutating, 600 default, 1000 read-only)", p)
	}
	app := &Application{Construct: a.node, Aspect: aspect, Priority: p}
	a.node.local = append(a.node.local, app)
	return app, nil
}

// List returns the aspects applied directly to the construct; their priority can be changed
// before they are invoked.
func (a Applications) List() []*Application { return append([]*Application(nil), a.node.local...) }

// Options tune invocation.
type Options struct {
	// SinglePass is the legacy behaviour: one pass, nodes added beside already-visited ones and
	// aspects added by aspects are missed (a warning says so).
	SinglePass bool
}

// Invocation records one aspect run, for tests and reports.
type Invocation struct {
	Application *Application
	Node        *Node
	Inherited   bool
}

// Result of invoking aspects.
type Result struct {
	Passes      int
	Invocations []Invocation
	Warnings    []string
}

// Invoke runs every aspect of the tree rooted at root until a pass invokes nothing.
func Invoke(root *Node, opts Options) (Result, error) {
	inv := &invoker{invoked: map[invKey]bool{}, last: map[*Node]*Application{}, opts: opts}
	for pass := 1; ; pass++ {
		if pass > MaxPasses {
			return inv.result, fmt.Errorf("aspects did not stabilize after %d passes; "+
				"these kept changing the tree in the last pass: %s", MaxPasses, strings.Join(inv.lastPassAspects(), ", "))
		}
		inv.result.Passes = pass
		inv.didSomething = false
		inv.passAspects = map[string]bool{}
		if err := inv.visit(root, nil, 0); err != nil {
			return inv.result, err
		}
		if opts.SinglePass || !inv.didSomething {
			return inv.result, nil
		}
	}
}

type invKey struct {
	app  *Application
	node *Node
}

type invoker struct {
	opts         Options
	invoked      map[invKey]bool
	last         map[*Node]*Application // last application invoked on a node
	result       Result
	didSomething bool
	passAspects  map[string]bool
}

func (v *invoker) lastPassAspects() []string {
	out := make([]string, 0, len(v.passAspects))
	for k := range v.passAspects {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (v *invoker) visit(n *Node, inherited []*Application, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("the construct tree is more than %d levels deep at %s: "+
			"an aspect keeps adding nested constructs (last on the parent: %s)", MaxDepth, n, v.last[n.Parent])
	}
	localBefore := len(n.local)
	// Inherited first, then local; a stable sort by priority keeps that order at equal priority.
	apps := append(append([]*Application(nil), inherited...), n.local...)
	sort.SliceStable(apps, func(i, j int) bool { return apps[i].Priority < apps[j].Priority })
	for _, app := range apps {
		key := invKey{app, n}
		if v.invoked[key] {
			continue
		}
		if last := v.last[n]; last != nil && app.Priority < last.Priority {
			return fmt.Errorf("aspect %s cannot run on %s after %s: a lower priority must run first "+
				"(was it added by another aspect, or its priority changed?)", app, n, last)
		}
		if err := app.Aspect.Visit(n); err != nil {
			return fmt.Errorf("aspect %s on %s: %w", app, n, err)
		}
		v.invoked[key] = true
		v.last[n] = app
		v.didSomething = true
		v.passAspects[app.String()] = true
		v.result.Invocations = append(v.result.Invocations,
			Invocation{Application: app, Node: n, Inherited: app.Construct != n})
	}
	if v.opts.SinglePass && len(n.local) > localBefore {
		v.result.Warnings = append(v.result.Warnings, fmt.Sprintf(
			"an aspect added %d aspect(s) to %s while it was being visited; single-pass mode does not invoke them",
			len(n.local)-localBefore, n))
	}
	childInherited := append(append([]*Application(nil), inherited...), n.local...)
	// Snapshot: in single-pass mode, nodes added beside ones already visited are missed, as the
	// old behaviour did; stabilization visits them in the next pass.
	children := append([]*Node(nil), n.Children...)
	for _, c := range children {
		if err := v.visit(c, childInherited, depth+1); err != nil {
			return err
		}
	}
	return nil
}
