package review

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
)

// NestedTemplateProblems are nestedTemplateProblems for every stack of a, with templates (its
// bytes as they deploy, DeployTemplates) in place of the files: the merge deploy refuses what
// the review would have blocked, also when the review marker it holds does not say so.
func NestedTemplateProblems(a *assembly.Assembly, templates map[string][]byte) []string {
	var out []string
	for _, s := range a.AllStacks() {
		if body, ok := templates[s.QualifiedID()]; ok {
			out = append(out, nestedTemplateProblems(a, s, body)...)
		}
	}
	return out
}

// maxNestedDepth bounds how deep nested stacks are followed.
const maxNestedDepth = 8

// nestedTemplateProblems finds nested stacks whose TemplateURL does not name the asset holding
// the template the review reads for them (the aws:asset:path metadata, or the asset the URL's
// hash names). The review shows that template and the deploy identity hashes that asset, but
// CloudFormation reads the TemplateURL: when it points elsewhere — another asset, an object the
// app names outside the assembly — what deploys is not what was reviewed.
func nestedTemplateProblems(a *assembly.Assembly, s *assembly.Stack, body []byte) []string {
	if !bytes.Contains(body, []byte("AWS::CloudFormation::Stack")) {
		return nil // no nested stack: nothing to parse a second time (the diff parsed it once)
	}
	t, err := cfn.Parse(body)
	if err != nil {
		return nil // the diff reports a template it cannot read
	}
	var out []string
	checkNested(a, s, s.TemplatePath, t, s.QualifiedID(), 0, &out)
	return out
}

func checkNested(a *assembly.Assembly, s *assembly.Stack, file string, t *cfn.Object, where string, depth int,
	out *[]string) {
	resources := cfn.AsObject(field(t, "Resources"))
	if resources == nil || depth > maxNestedDepth {
		return
	}
	for _, id := range resources.SortedKeys() {
		r := cfn.AsObject(field(resources, id))
		if r == nil || field(r, "Type") != "AWS::CloudFormation::Stack" {
			continue
		}
		url := cfn.JSON(field(cfn.AsObject(field(r, "Properties")), "TemplateURL"))
		reviewed := ""
		if p, ok := field(cfn.AsObject(field(r, "Metadata")), "aws:asset:path").(string); ok {
			reviewed = path.Join(path.Dir(file), p)
		}
		served, ok := servedFile(a, s, url)
		switch {
		case !ok:
			*out = append(*out, fmt.Sprintf("nested stack %s in %s: its TemplateURL names no asset of the stack, so "+
				"CloudFormation would deploy a template cdkbot did not review", id, where))
			continue
		case reviewed != "" && served != reviewed:
			*out = append(*out, fmt.Sprintf("nested stack %s in %s: its TemplateURL names the asset %s, but the "+
				"template reviewed for it is %s", id, where, served, reviewed))
			continue
		}
		raw, err := a.ReadFile(served, assembly.MaxFileSize)
		if err != nil {
			continue // the diff reports what it cannot read
		}
		if nt, err := cfn.Parse(raw); err == nil {
			checkNested(a, s, served, nt, where+"/"+id, depth+1, out)
		}
	}
}

// servedFile is the assembly file CloudFormation reads for a nested stack whose TemplateURL
// (as JSON text) is url: the file asset of the stack's own manifests whose object key the URL
// names, or the legacy asset whose parameters it references.
func servedFile(a *assembly.Assembly, s *assembly.Stack, url string) (string, bool) {
	var found []string
	for _, m := range a.AllAssetManifests() {
		if m.NestedPath != s.NestedPath || !slices.Contains(s.Dependencies, m.ArtifactID) {
			continue
		}
		for _, f := range m.Files {
			if f.Source.ResolvedPath == "" {
				continue
			}
			for _, d := range f.Destinations {
				if d.ObjectKey != "" && strings.Contains(url, d.ObjectKey) {
					found = append(found, f.Source.ResolvedPath)
				}
			}
		}
	}
	for _, la := range s.LegacyAssets() {
		if la.S3KeyParameter != "" && strings.Contains(url, `"`+la.S3KeyParameter+`"`) {
			found = append(found, la.ResolvedPath)
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	if len(found) != 1 {
		return "", false // none, or ambiguous
	}
	return found[0], true
}

// field is o's value at key, nil when o is nil or has none.
func field(o *cfn.Object, key string) any {
	if o == nil {
		return nil
	}
	v, _ := o.Get(key)
	return v
}
