package assembly

import (
	"fmt"
	"sort"
	"strings"
)

// TreeNode is a construct of the app's construct tree (tree.json).
type TreeNode struct {
	ID            string
	Path          string
	Children      []*TreeNode // sorted by id
	Attributes    map[string]any
	ConstructInfo *ConstructInfo
}

// ConstructInfo names the class a construct was made from and the library version.
type ConstructInfo struct {
	FQN     string `json:"fqn"`
	Version string `json:"version"`
}

// Framework is the CDK library that synthesized the assembly.
type Framework struct {
	Name    string `json:"name"`    // "aws-cdk-lib" or "@aws-cdk/core"
	Version string `json:"version"` // "" when unknown
}

func (f Framework) String() string {
	if f.Version == "" {
		return f.Name
	}
	return f.Name + " " + f.Version
}

var frameworkLibraries = []string{"aws-cdk-lib", "@aws-cdk/core"}

// Tree parses tree.json on first use. It returns (nil, nil) when the assembly has no tree.
func (a *Assembly) Tree() (*TreeNode, error) {
	a.treeOnce.Do(func() {
		if a.TreeFile == "" {
			return
		}
		data, err := a.ReadFile(a.TreeFile, MaxFileSize)
		if err != nil {
			a.treeErr = &Error{File: a.TreeFile,
				Issues: []Issue{{Message: "cannot read the construct tree: " + err.Error()}}, Err: err}
			return
		}
		var tf treeFileJSON
		if err := decodeTyped(a.TreeFile, data, &tf); err != nil {
			a.treeErr = err
			return
		}
		if tf.Tree == nil {
			a.treeErr = newError(a.TreeFile, "/tree", "", "the construct tree file has no \"tree\" root")
			return
		}
		a.tree = convertTree(tf.Tree)
	})
	return a.tree, a.treeErr
}

func convertTree(n *treeNode) *TreeNode {
	out := &TreeNode{ID: n.ID, Path: n.Path, Attributes: n.Attributes, ConstructInfo: n.ConstructInfo}
	for _, c := range n.Children {
		if c != nil {
			out.Children = append(out.Children, convertTree(c))
		}
	}
	sort.Slice(out.Children, func(i, j int) bool { return out.Children[i].ID < out.Children[j].ID })
	return out
}

// Walk visits the node and its descendants depth first, parents before children.
func (n *TreeNode) Walk(visit func(*TreeNode) bool) {
	if !visit(n) {
		return
	}
	for _, c := range n.Children {
		c.Walk(visit)
	}
}

// Framework detects the framework that synthesized the assembly: the App's construct info in
// tree.json, else any construct of a framework library, else the manifest's runtime libraries
// (old CDK v1). It returns the zero Framework when nothing tells.
func (a *Assembly) Framework() Framework {
	if tree, err := a.Tree(); err == nil && tree != nil {
		if fw, ok := frameworkOf(tree.ConstructInfo); ok {
			return fw
		}
		var found Framework
		tree.Walk(func(n *TreeNode) bool {
			if fw, ok := frameworkOf(n.ConstructInfo); ok && found.Name == "" {
				found = fw
			}
			return found.Name == ""
		})
		if found.Name != "" {
			return found
		}
	}
	for _, lib := range frameworkLibraries {
		if v, ok := a.RuntimeLibraries[lib]; ok {
			return Framework{Name: lib, Version: v}
		}
	}
	return Framework{}
}

func frameworkOf(ci *ConstructInfo) (Framework, bool) {
	if ci == nil {
		return Framework{}, false
	}
	for _, lib := range frameworkLibraries {
		if strings.HasPrefix(ci.FQN, lib+".") {
			return Framework{Name: lib, Version: ci.Version}, true
		}
	}
	return Framework{}, false
}

// String renders the node for debugging.
func (n *TreeNode) String() string { return fmt.Sprintf("%s (%d children)", n.Path, len(n.Children)) }
