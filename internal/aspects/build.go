package aspects

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
)

// App is the construct tree of an assembly with the templates its resources live in.
type App struct {
	Root   *Node
	Stacks []*Stack // top-level stacks of the assembly and its Stages, in artifact order
	byID   map[string]*assembly.Stack
}

// ArtifactByID returns the assembly stack of a stack id (its qualified artifact id).
func (a *App) ArtifactByID(id string) *assembly.Stack { return a.byID[id] }

// Build rebuilds the construct tree from tree.json and the stack templates. Resources are
// linked to their template entries through the aws:cdk:logicalId metadata; an assembly without
// tree.json gets a flat tree of stacks and resources. Templates of nested stacks are not
// linked yet (their resources are read-only nodes).
func Build(a *assembly.Assembly) (*App, error) {
	app := &App{byID: map[string]*assembly.Stack{}}
	tree, err := a.Tree()
	if err != nil {
		return nil, err
	}
	nodes := map[string]*Node{}
	if tree != nil {
		app.Root = convert(tree, nil, nodes)
	} else {
		app.Root = &Node{Attributes: map[string]any{}}
		nodes[""] = app.Root
	}
	for _, s := range a.AllStacks() {
		raw, err := s.TemplateBytes()
		if err != nil {
			return nil, err
		}
		tpl, err := cfn.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.TemplatePath, err)
		}
		st := &Stack{ID: s.QualifiedID(), Template: tpl}
		app.byID[st.ID] = s
		app.Stacks = append(app.Stacks, st)
		if err := link(app, nodes, st, s, tree != nil, a.TreeFile); err != nil {
			return nil, err
		}
	}
	return app, nil
}

func convert(t *assembly.TreeNode, parent *Node, index map[string]*Node) *Node {
	n := &Node{ID: t.ID, Path: t.Path, Parent: parent, Attributes: t.Attributes}
	if n.Attributes == nil {
		n.Attributes = map[string]any{}
	}
	if t.ConstructInfo != nil {
		n.FQN = t.ConstructInfo.FQN
	}
	index[n.Path] = n
	for _, c := range t.Children {
		n.Children = append(n.Children, convert(c, n, index))
	}
	return n
}

// link attaches a stack's template to its construct and its resources to their nodes.
func link(app *App, nodes map[string]*Node, st *Stack, s *assembly.Stack, haveTree bool, treeFile string) error {
	ids := s.LogicalIDs() // "/Stack/Bucket/Resource" → "Bucket1234"
	paths := make([]string, 0, len(ids))
	for p := range ids {
		paths = append(paths, strings.TrimPrefix(p, "/"))
	}
	sort.Strings(paths)
	resources := cfn.AsObject(get(st.Template, "Resources"))
	if !haveTree || len(paths) == 0 {
		// No tree (or no logical-id metadata): a flat stack node with one node per resource.
		node, err := app.Root.AddChild(st.ID)
		if err != nil {
			return err
		}
		node.Stack, st.Node = st, node
		for _, id := range resources.Keys() {
			r := cfn.AsObject(get(resources, id))
			c, err := node.AddChild(id)
			if err != nil {
				return err
			}
			c.LogicalID, c.Resource = id, r
		}
		st.Changed = false
		return nil
	}
	// The stack construct: the nearest ancestor of its resources made from a Stack class, else
	// (frameworks too old to record construct classes) the resource's top-level construct.
	var first *Node
	for _, p := range paths {
		if first = nodes[p]; first != nil {
			break
		}
	}
	if first == nil {
		return fmt.Errorf("%s does not match the templates: none of stack %s's constructs (%s, …) is in the tree",
			treeFile, s.QualifiedID(), paths[0])
	}
	stackNode := first
	for p := first.Parent; p != nil; p = p.Parent {
		if strings.HasSuffix(p.FQN, ".Stack") {
			stackNode = p
			break
		}
		if p.Parent != nil && p.Parent.Parent == nil && p.FQN == "" {
			stackNode = p
		}
	}
	stackNode.Stack, st.Node = st, stackNode
	stackNode.Walk(func(n *Node) {
		if n.Stack == nil || n == stackNode {
			n.Stack = st
		}
	})
	for _, p := range paths {
		n := nodes[p]
		logicalID := ids["/"+p]
		r := cfn.AsObject(get(resources, logicalID))
		if n == nil {
			// Some frameworks add constructs (BootstrapVersion, CDKMetadata) after writing tree.json.
			if r == nil {
				continue
			}
			var err error
			if n, err = stackNode.AddChild(logicalID); err != nil {
				return err
			}
			n.Stack = st
		}
		if r == nil {
			if isOutputOrParameter(st.Template, logicalID) || insideNestedStack(n, stackNode) {
				continue // outputs and parameters carry logical ids too; nested stacks have their own template
			}
			return fmt.Errorf("%s does not match the templates: construct %q has logical id %s, which is not a resource of %s",
				treeFile, p, logicalID, s.TemplatePath)
		}
		n.LogicalID, n.Resource = logicalID, r
	}
	return nil
}

func isOutputOrParameter(tpl *cfn.Object, id string) bool {
	for _, section := range []string{"Outputs", "Parameters", "Conditions", "Mappings", "Rules"} {
		if cfn.AsObject(get(tpl, section)).Has(id) {
			return true
		}
	}
	return false
}

// insideNestedStack reports whether n belongs to a NestedStack below the stack construct: such
// constructs are described in the parent's metadata but live in the nested template.
func insideNestedStack(n, stackNode *Node) bool {
	for p := n.Parent; p != nil && p != stackNode; p = p.Parent {
		if strings.HasSuffix(p.FQN, "NestedStack") {
			return true
		}
		for _, c := range p.Children {
			if strings.HasSuffix(c.ID, ".NestedStack") {
				return true
			}
		}
		// Frameworks that record no construct classes: a NestedStack "X" has a sibling
		// "X.NestedStack" holding its AWS::CloudFormation::Stack resource.
		if p.Parent != nil {
			for _, c := range p.Parent.Children {
				if c.ID == p.ID+".NestedStack" {
					return true
				}
			}
		}
	}
	return false
}
