// Package aspects applies priority-ordered aspects to a synthesized CDK app: policy checks that
// read resources and mutations that change them (add tags, add a logging bucket), over the
// construct tree rebuilt from tree.json and the stack templates.
//
// It implements the aspects design's guarantees: an aspect application runs at most once per
// node; nodes added by aspects inherit their ancestors' aspects; lower priority runs first; at
// equal priority inherited aspects run before local ones; and a lower-priority aspect arriving
// after a higher one ran on a node is an error. Passes repeat until the tree stops changing.
package aspects

import (
	"fmt"
	"path"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// Node is a construct.
type Node struct {
	ID         string
	Path       string
	FQN        string
	Attributes map[string]any
	Parent     *Node
	Children   []*Node
	// Stack is the stack the node belongs to (nil above stacks).
	Stack *Stack
	// LogicalID and Resource are set for CloudFormation resources: the template entry
	// ({"Type", "Properties", ...}) that aspects read and change.
	LogicalID string
	Resource  *cfn.Object

	local []*Application
}

// Stack is a stack's template, shared by the nodes of the stack.
type Stack struct {
	ID       string // artifact id
	Node     *Node
	Template *cfn.Object
	// Changed is set when an aspect changed the template.
	Changed bool
}

// Type is the CloudFormation type of a resource node, "" otherwise.
func (n *Node) Type() string {
	if n.Resource == nil {
		return ""
	}
	s, _ := get(n.Resource, "Type").(string)
	return s
}

// Properties returns the resource's Properties object, creating it when absent.
func (n *Node) Properties() *cfn.Object {
	if n.Resource == nil {
		return nil
	}
	p := cfn.AsObject(get(n.Resource, "Properties"))
	if p == nil {
		p = cfn.NewObject()
		n.Resource.Set("Properties", p)
	}
	return p
}

// SetProperty changes a resource property and marks the stack changed.
func (n *Node) SetProperty(name string, v any) {
	n.Properties().Set(name, v)
	if n.Stack != nil {
		n.Stack.Changed = true
	}
}

// AddChild adds a construct under n.
func (n *Node) AddChild(id string) (*Node, error) {
	for _, c := range n.Children {
		if c.ID == id {
			return nil, fmt.Errorf("%s already has a child %q", n.Path, id)
		}
	}
	p := id
	if n.Path != "" {
		p = n.Path + "/" + id
	}
	c := &Node{ID: id, Path: p, Parent: n, Stack: n.Stack, Attributes: map[string]any{}}
	n.Children = append(n.Children, c)
	return c, nil
}

// AddResource adds a CloudFormation resource under n: a node and a template entry in n's stack.
func (n *Node) AddResource(id, logicalID, typ string, props *cfn.Object) (*Node, error) {
	if n.Stack == nil {
		return nil, fmt.Errorf("%s is not inside a stack", n.Path)
	}
	resources := cfn.AsObject(get(n.Stack.Template, "Resources"))
	if resources == nil {
		resources = cfn.NewObject()
		n.Stack.Template.Set("Resources", resources)
	}
	if resources.Has(logicalID) {
		return nil, fmt.Errorf("stack %s already has a resource %q", n.Stack.ID, logicalID)
	}
	c, err := n.AddChild(id)
	if err != nil {
		return nil, err
	}
	r := cfn.NewObject()
	r.Set("Type", typ)
	if props == nil {
		props = cfn.NewObject()
	}
	r.Set("Properties", props)
	resources.Set(logicalID, r)
	c.LogicalID, c.Resource, c.FQN = logicalID, r, "cdkbot.aspect.Resource"
	c.Attributes["aws:cdk:cloudformation:type"] = typ
	n.Stack.Changed = true
	return c, nil
}

// Walk visits n and its descendants, parents first.
func (n *Node) Walk(visit func(*Node)) {
	visit(n)
	for _, c := range n.Children {
		c.Walk(visit)
	}
}

// Ancestors returns n's ancestors from the root down, without n.
func (n *Node) Ancestors() []*Node {
	var out []*Node
	for p := n.Parent; p != nil; p = p.Parent {
		out = append([]*Node{p}, out...)
	}
	return out
}

func (n *Node) String() string {
	if n.Path == "" {
		return "(app)"
	}
	return n.Path
}

func get(v any, key string) any {
	x, _ := cfn.AsObject(v).Get(key)
	return x
}

// MatchPath reports whether a construct path matches a glob where "*" matches one path segment
// and "**" any number of segments.
func MatchPath(glob, path string) bool {
	return matchSegments(strings.Split(glob, "/"), strings.Split(path, "/"))
}

// matchSegments matches in O(len(glob)·len(path)) steps (one row of a table per glob segment),
// so a glob of many "**" cannot take exponential time.
func matchSegments(glob, path []string) bool {
	// can[j]: the glob segments seen so far match path[:j].
	can := make([]bool, len(path)+1)
	can[0] = true
	for _, g := range glob {
		next := make([]bool, len(path)+1)
		if g == "**" {
			reached := false
			for j := range can {
				reached = reached || can[j]
				next[j] = reached // "**" takes any number of segments
			}
		} else {
			for j := 1; j <= len(path); j++ {
				next[j] = can[j-1] && segmentMatch(g, path[j-1])
			}
		}
		can = next
	}
	return can[len(path)]
}

func segmentMatch(glob, s string) bool {
	ok, _ := path.Match(glob, s)
	return ok
}
