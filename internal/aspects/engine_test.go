package aspects

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// fn adapts a function to an Aspect with a name.
type fn struct {
	name  string
	visit func(*Node) error
}

func (f fn) Visit(n *Node) error { return f.visit(n) }
func (f fn) Name() string        { return f.name }

func newStack(t testing.TB, root *Node, id string) *Node {
	t.Helper()
	s, err := root.AddChild(id)
	if err != nil {
		t.Fatal(err)
	}
	tpl := cfn.NewObject()
	tpl.Set("Resources", cfn.NewObject())
	s.Stack = &Stack{ID: id, Node: s, Template: tpl}
	return s
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// tagger sets a tag on every resource it visits.
func tagger(key, value string) Aspect {
	return fn{"tags", func(n *Node) error {
		if n.Resource != nil {
			tags := cfn.NewObject()
			tags.Set(key, value)
			n.SetProperty("Tags", tags)
		}
		return nil
	}}
}

func tagOf(n *Node) string {
	v, _ := cfn.AsObject(get(n.Properties(), "Tags")).Get("team")
	s, _ := v.(string)
	return s
}

// The seed's customer scenario: a stack-level tags aspect and an aspect on a child construct
// that adds a bucket to the stack. With stabilization the new bucket is tagged; in the legacy
// single pass it is not.
func TestCustomerScenario(t *testing.T) {
	t.Parallel()
	for _, singlePass := range []bool{false, true} {
		root := &Node{}
		stack := newStack(t, root, "Stack")
		child := must(stack.AddChild("Child"))
		must(child.AddResource("Queue", "Queue", "AWS::SQS::Queue", nil))
		must(Of(stack).Add(tagger("team", "core"), PriorityMutating))
		added := false
		must(Of(child).Add(fn{"add-bucket", func(n *Node) error {
			if n == child && !added {
				added = true
				_, err := stack.AddResource("LogBucket", "LogBucket", "AWS::S3::Bucket", nil)
				return err
			}
			return nil
		}}))
		res, err := Invoke(root, Options{SinglePass: singlePass})
		if err != nil {
			t.Fatal(err)
		}
		bucket := stack.Children[len(stack.Children)-1]
		got := tagOf(bucket)
		switch {
		case !singlePass && (got != "core" || res.Passes != 3):
			// Pass 1 adds the bucket, pass 2 tags it, pass 3 changes nothing and ends.
			t.Errorf("stabilized: bucket tag %q after %d passes, want core after 3", got, res.Passes)
		case singlePass && got != "":
			t.Errorf("single pass: the new bucket was tagged %q; the legacy behaviour misses it", got)
		}
	}
}

func TestEachApplicationRunsOncePerNode(t *testing.T) {
	t.Parallel()
	root := &Node{}
	stack := newStack(t, root, "S")
	must(stack.AddChild("A"))
	count := map[*Node]int{}
	must(Of(root).Add(fn{"count", func(n *Node) error { count[n]++; return nil }}))
	// A second aspect keeps adding nodes for a few passes, forcing re-walks.
	adds := 0
	must(Of(stack).Add(fn{"grow", func(n *Node) error {
		// Each new node, visited in a later pass, adds the next one.
		if (n == stack || strings.HasPrefix(n.ID, "New")) && adds < 3 {
			adds++
			_, err := stack.AddChild(fmt.Sprintf("New%d", adds))
			return err
		}
		return nil
	}}))
	res, err := Invoke(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for n, c := range count {
		if c != 1 {
			t.Errorf("%s visited %d times", n, c)
		}
	}
	if len(count) != 6 || res.Passes < 2 {
		t.Errorf("visited %d nodes in %d passes", len(count), res.Passes)
	}
}

func TestPriorityOrderAndInheritedFirst(t *testing.T) {
	t.Parallel()
	root := &Node{}
	stack := newStack(t, root, "S")
	leaf := must(stack.AddChild("Leaf"))
	var order []string
	rec := func(name string) Aspect {
		return fn{name, func(n *Node) error {
			if n == leaf {
				order = append(order, name)
			}
			return nil
		}}
	}
	must(Of(leaf).Add(rec("local-600")))
	must(Of(leaf).Add(rec("local-100"), 100))
	must(Of(stack).Add(rec("inherited-600")))
	must(Of(root).Add(rec("root-1000"), PriorityReadonly))
	if _, err := Invoke(root, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, " "); got != "local-100 inherited-600 local-600 root-1000" {
		t.Errorf("order %s", got)
	}
}

func TestPriorityInversionIsAnError(t *testing.T) {
	t.Parallel()
	root := &Node{}
	stack := newStack(t, root, "S")
	must(Of(stack).Add(fn{"readonly", func(n *Node) error {
		if n == stack {
			_, err := Of(stack).Add(fn{"late-mutation", func(*Node) error { return nil }}, PriorityMutating)
			return err
		}
		return nil
	}}, PriorityReadonly))
	_, err := Invoke(root, Options{})
	if err == nil || !strings.Contains(err.Error(), "late-mutation (priority 200, on S)") || !strings.Contains(err.Error(), "readonly (priority 1000, on S)") {
		t.Fatalf("want an error naming both aspects, got %v", err)
	}
}

func TestPriorityCanBeOverriddenBeforeInvocation(t *testing.T) {
	t.Parallel()
	root := &Node{}
	var order []string
	must(Of(root).Add(fn{"a", func(*Node) error { order = append(order, "a"); return nil }}))
	must(Of(root).Add(fn{"b", func(*Node) error { order = append(order, "b"); return nil }}))
	Of(root).List()[1].Priority = 10
	if _, err := Invoke(root, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, "") != "ba" {
		t.Errorf("order %v", order)
	}
	if _, err := Of(root).Add(fn{"neg", nil}, -1); err == nil {
		t.Error("a negative priority must be refused")
	}
}

func TestNestedAspectsRunWithStabilizationOnly(t *testing.T) {
	t.Parallel()
	for _, single := range []bool{false, true} {
		root := &Node{}
		ran := false
		must(Of(root).Add(fn{"adder", func(n *Node) error {
			if n == root && len(Of(root).List()) == 1 {
				_, err := Of(root).Add(fn{"nested", func(*Node) error { ran = true; return nil }}, 700)
				return err
			}
			return nil
		}}))
		res, err := Invoke(root, Options{SinglePass: single})
		if err != nil {
			t.Fatal(err)
		}
		if ran == single {
			t.Errorf("single=%v: nested aspect ran=%v", single, ran)
		}
		if single && len(res.Warnings) != 1 {
			t.Errorf("single pass should warn about the nested aspect: %v", res.Warnings)
		}
	}
}

func TestEndlessChangesStopAtTheLimit(t *testing.T) {
	t.Parallel()
	root := &Node{}
	i := 0
	stack := must(root.AddChild("S"))
	must(Of(stack).Add(fn{"forever", func(n *Node) error {
		// A sibling is visited only in the next pass, so every pass changes the tree again.
		if n != stack {
			i++
			_, err := n.Parent.AddChild(fmt.Sprintf("c%d", i))
			return err
		}
		return nil
	}}))
	must(stack.AddChild("seed"))
	_, err := Invoke(root, Options{})
	if err == nil || !strings.Contains(err.Error(), "did not stabilize after 100 passes") || !strings.Contains(err.Error(), "forever") {
		t.Fatalf("got %v", err)
	}
}

func TestEndlessNestingStopsAtTheDepthLimit(t *testing.T) {
	t.Parallel()
	root := &Node{}
	i := 0
	must(Of(root).Add(fn{"nest", func(n *Node) error {
		i++
		_, err := n.AddChild(fmt.Sprintf("c%d", i))
		return err
	}}))
	_, err := Invoke(root, Options{})
	if err == nil || !strings.Contains(err.Error(), "more than 500 levels deep") || !strings.Contains(err.Error(), "nest") {
		t.Fatalf("got %v", err)
	}
}

// TestPropertyRandomTrees checks invariants (1)-(4) on random trees with random aspects, some
// of which add nodes, and that the outcome does not depend on the order in which aspects of
// different priorities were added.
func TestPropertyRandomTrees(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		var first string
		for round := range 2 {
			treeRand := rand.New(rand.NewPCG(seed, 3)) // the same tree in both rounds
			root, nodes := randomTree(treeRand, 5+treeRand.IntN(40))
			specs := randomSpecs(rand.New(rand.NewPCG(seed, 11)), nodes)
			order := r.Perm(len(specs))
			if round == 0 {
				sort.Ints(order)
			}
			for _, i := range order {
				sp := specs[i]
				must(Of(sp.target(root)).Add(sp.aspect(), sp.priority))
			}
			res, err := Invoke(root, Options{})
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			checkInvariants(t, seed, root, res)
			if shape := treeShape(root); round == 0 {
				first = shape
			} else if shape != first {
				t.Fatalf("seed %d: result depends on the order aspects were added:\n%s\nvs\n%s", seed, first, shape)
			}
			_ = root
		}
	}
}

type spec struct {
	path     string
	priority int
	adds     bool
	name     string
}

func (s spec) target(root *Node) *Node {
	var found *Node
	root.Walk(func(n *Node) {
		if n.Path == s.path {
			found = n
		}
	})
	return found
}

func (s spec) aspect() Aspect {
	added := map[string]bool{}
	return fn{s.name, func(n *Node) error {
		if n.Attributes == nil {
			n.Attributes = map[string]any{}
		}
		n.Attributes[s.name] = true
		if s.adds && len(strings.Split(n.Path, "/")) < 4 && !added[n.Path] && len(n.Children) < 3 {
			added[n.Path] = true
			_, err := n.AddChild(s.name + "-child")
			return err
		}
		return nil
	}}
}

func randomTree(r *rand.Rand, size int) (*Node, []*Node) {
	root := &Node{Attributes: map[string]any{}}
	nodes := []*Node{root}
	for i := range size {
		p := nodes[r.IntN(len(nodes))]
		nodes = append(nodes, must(p.AddChild(fmt.Sprintf("n%d", i))))
	}
	return root, nodes
}

func randomSpecs(r *rand.Rand, nodes []*Node) []spec {
	priorities := []int{PriorityMutating, PriorityDefault, PriorityReadonly, 350, 800}
	r.Shuffle(len(priorities), func(i, j int) { priorities[i], priorities[j] = priorities[j], priorities[i] })
	var out []spec
	for i := range 1 + r.IntN(len(priorities)) {
		out = append(out, spec{path: nodes[r.IntN(len(nodes))].Path, priority: priorities[i], adds: r.IntN(3) == 0, name: fmt.Sprintf("a%d", i)})
	}
	return out
}

func checkInvariants(t *testing.T, seed uint64, root *Node, res Result) {
	t.Helper()
	seen := map[invKey]bool{}
	perNode := map[*Node][]Invocation{}
	for _, inv := range res.Invocations {
		k := invKey{inv.Application, inv.Node}
		if seen[k] {
			t.Fatalf("seed %d (1): %s ran twice on %s", seed, inv.Application, inv.Node)
		}
		seen[k] = true
		perNode[inv.Node] = append(perNode[inv.Node], inv)
	}
	root.Walk(func(n *Node) {
		for _, anc := range append(n.Ancestors(), n) {
			for _, app := range anc.local {
				if !seen[invKey{app, n}] {
					t.Fatalf("seed %d (2): %s never ran on %s", seed, app, n)
				}
			}
		}
		invs := perNode[n]
		for i := 1; i < len(invs); i++ {
			a, b := invs[i-1], invs[i]
			if b.Application.Priority < a.Application.Priority {
				t.Fatalf("seed %d (3): on %s, %s ran after %s", seed, n, b.Application, a.Application)
			}
			if b.Application.Priority == a.Application.Priority && !a.Inherited && b.Inherited {
				t.Fatalf("seed %d (4): on %s, inherited %s ran after local %s", seed, n, b.Application, a.Application)
			}
		}
	})
}

func treeShape(root *Node) string {
	var lines []string
	root.Walk(func(n *Node) {
		var marks []string
		for k := range n.Attributes {
			marks = append(marks, k)
		}
		sort.Strings(marks)
		lines = append(lines, n.Path+" "+strings.Join(marks, ","))
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func BenchmarkInvoke50000Nodes10Aspects(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		r := rand.New(rand.NewPCG(1, 2))
		root, nodes := randomTree(r, 50000)
		for i := range 10 {
			target := nodes[r.IntN(100)]
			must(Of(target).Add(fn{fmt.Sprintf("a%d", i), func(n *Node) error { return nil }}, []int{200, 600, 1000}[i%3]))
		}
		b.StartTimer()
		res, err := Invoke(root, Options{})
		if err != nil || res.Passes != 2 {
			b.Fatal(err, res.Passes)
		}
	}
}

// Matching is linear in glob × path: seven "**" against a 62-segment path that does not match
// answers at once (it took 59 s by backtracking).
func TestMatchPathIsLinear(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		glob, path string
		want       bool
	}{
		{"Prod/**", "Prod/Api/Table/Resource", true},
		{"Prod/**", "Prod", true},
		{"**/Resource", "Prod/Api/Table/Resource", true},
		{"Prod/*/Table/**", "Prod/Api/Table", true},
		{"Prod/*/Table/**", "Prod/Api/Queue/Resource", false},
		{"*", "Prod/Api", false},
		{"**", "", true},
	} {
		if got := MatchPath(c.glob, c.path); got != c.want {
			t.Errorf("MatchPath(%q, %q) = %v", c.glob, c.path, got)
		}
	}
	segments := make([]string, 62)
	for i := range segments {
		segments[i] = "a"
	}
	hostile := strings.Repeat("**/", 7) + "b"
	done := make(chan bool)
	go func() { done <- MatchPath(hostile, strings.Join(segments, "/")) }()
	select {
	case got := <-done:
		if got {
			t.Error("matched")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("seven ** against 62 segments took over 5 s")
	}
}
