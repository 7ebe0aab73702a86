// Package publishplan turns an assembly into the publishing work a deployment needs: every
// asset × destination, with ${AWS::AccountId}, ${AWS::Region} and ${AWS::Partition} resolved for
// the destination, and (for assemblies synthesized the legacy 1.0 way) the toolkit-bucket
// uploads and the stack parameter values that point the templates at them. It is pure: the
// publish adapter executes the plan.
package publishplan

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

// Kind of asset.
type Kind string

// Asset kinds.
const (
	File  Kind = "file"
	Image Kind = "image"
)

// Job publishes one asset to its destinations; the asset is packaged once.
type Job struct {
	ID       string `json:"id"`       // asset id (the source hash)
	Manifest string `json:"manifest"` // qualified asset manifest artifact, or the legacy stack
	Kind     Kind   `json:"kind"`
	// Files.
	SourcePath string   `json:"sourcePath,omitempty"` // root-relative path in the assembly
	Packaging  string   `json:"packaging,omitempty"`  // file | zip
	Executable []string `json:"executable,omitempty"`
	// Images.
	Image        *assembly.DockerImageSource `json:"image,omitempty"`
	Destinations []Destination               `json:"destinations"`
}

// Destination is where a job puts its asset, with placeholders resolved.
type Destination struct {
	ID                   string `json:"id"`
	Region               string `json:"region,omitempty"`
	AssumeRoleARN        string `json:"assumeRoleArn,omitempty"`
	AssumeRoleExternalID string `json:"assumeRoleExternalId,omitempty"`
	// Files.
	Bucket string `json:"bucketName,omitempty"`
	Key    string `json:"objectKey,omitempty"`
	// Images.
	Repository string `json:"repositoryName,omitempty"`
	Tag        string `json:"imageTag,omitempty"`
	// CreateRepository: legacy (1.0) images go to a repository the toolkit creates on first
	// use, where modern ones use the bootstrap stack's.
	CreateRepository bool `json:"createRepository,omitempty"`
}

// Plan is the publishing work of an assembly.
type Plan struct {
	Jobs []Job `json:"jobs"`
	// Parameters are, per legacy stack, the template parameters the deploy must pass.
	Parameters map[string]map[string]string `json:"parameters,omitempty"`
}

// Options tune planning.
type Options struct {
	// IDs selects assets by id (or id prefix of at least 8 characters); empty selects all.
	IDs []string
	// Unknown environments (environment-agnostic stacks) resolve to this account and region,
	// as the deploying credentials would.
	DefaultAccount, DefaultRegion string
	// ToolkitBucket is the CDKToolkit stack's BucketName output, for legacy assets.
	ToolkitBucket string
}

// Build plans the publishing of an assembly. Asset ids that select nothing are an error.
func Build(a *assembly.Assembly, o Options) (*Plan, error) {
	p := &Plan{Parameters: map[string]map[string]string{}}
	for _, m := range a.AllAssetManifests() {
		env := m.Environment
		if !env.AccountKnown() && o.DefaultAccount != "" {
			env.Account = o.DefaultAccount
		}
		if !env.RegionKnown() && o.DefaultRegion != "" {
			env.Region = o.DefaultRegion
		}
		for _, f := range m.Files {
			j := Job{ID: f.ID, Manifest: m.QualifiedID(), Kind: File,
				SourcePath: f.Source.ResolvedPath, Packaging: f.Source.Packaging, Executable: f.Source.Executable}
			if j.Packaging == "" {
				j.Packaging = "file"
			}
			for _, d := range f.Destinations {
				r := d.Resolved(env)
				j.Destinations = append(j.Destinations, Destination{ID: d.ID, Region: regionOf(r.Region, env),
					AssumeRoleARN: r.AssumeRoleARN, AssumeRoleExternalID: r.AssumeRoleExternalID,
					Bucket: r.BucketName, Key: r.ObjectKey})
			}
			p.Jobs = append(p.Jobs, j)
		}
		for _, img := range m.DockerImages {
			src := img.Source
			j := Job{ID: img.ID, Manifest: m.QualifiedID(), Kind: Image, Image: &src}
			for _, d := range img.Destinations {
				r := d.Resolved(env)
				j.Destinations = append(j.Destinations, Destination{ID: d.ID, Region: regionOf(r.Region, env),
					AssumeRoleARN: r.AssumeRoleARN, AssumeRoleExternalID: r.AssumeRoleExternalID,
					Repository: r.RepositoryName, Tag: r.ImageTag})
			}
			p.Jobs = append(p.Jobs, j)
		}
	}
	if err := legacy(a, o, p); err != nil {
		return nil, err
	}
	sort.SliceStable(p.Jobs, func(i, j int) bool {
		return p.Jobs[i].Manifest+"\x00"+p.Jobs[i].ID < p.Jobs[j].Manifest+"\x00"+p.Jobs[j].ID
	})
	if len(o.IDs) > 0 {
		return p.selected(o.IDs)
	}
	return p, nil
}

func regionOf(r string, env assembly.Environment) string {
	if r != "" {
		return r
	}
	if env.RegionKnown() {
		return env.Region
	}
	return ""
}

// legacy plans assets declared the 1.0 way: uploads to the toolkit bucket under
// assets/<id>/<sourceHash><ext>, and the parameter values (bucket, "assets/<id>/||<key>", hash)
// the deploy passes to the stack.
func legacy(a *assembly.Assembly, o Options, p *Plan) error {
	for _, s := range a.AllStacks() {
		for _, la := range s.LegacyAssets() {
			params := p.Parameters[s.QualifiedID()]
			if params == nil {
				params = map[string]string{}
				p.Parameters[s.QualifiedID()] = params
			}
			if la.Packaging == "container-image" {
				repo := la.RepositoryName
				if repo == "" {
					repo = "aws-cdk/assets"
				}
				tag := la.ImageTag
				if tag == "" {
					tag = la.SourceHash
				}
				src := assembly.DockerImageSource{Directory: la.Path, ResolvedDirectory: la.ResolvedPath, DockerFile: la.File,
					DockerBuildArgs: la.BuildArgs, DockerBuildTarget: la.Target, NetworkMode: la.NetworkMode, Platform: la.Platform}
				p.Jobs = append(p.Jobs, Job{ID: la.ID, Manifest: s.QualifiedID(), Kind: Image, Image: &src,
					Destinations: []Destination{{ID: "legacy", Region: s.Environment.Region,
						Repository: repo, Tag: tag, CreateRepository: true}}})
				if la.ImageNameParameter != "" {
					params[la.ImageNameParameter] = repo + ":" + tag
				}
				continue
			}
			if o.ToolkitBucket == "" {
				return fmt.Errorf("stack %s has legacy (1.0) assets: "+
					"the CDKToolkit stack's bucket name is needed (its BucketName output)", s.QualifiedID())
			}
			ext := ""
			if la.Packaging == "zip" {
				ext = ".zip"
			} else {
				ext = path.Ext(la.Path)
			}
			prefix := "assets/" + la.ID + "/"
			key := la.SourceHash + ext
			p.Jobs = append(p.Jobs, Job{ID: la.ID, Manifest: s.QualifiedID(), Kind: File,
				SourcePath: la.ResolvedPath, Packaging: la.Packaging,
				Destinations: []Destination{{ID: "legacy", Region: s.Environment.Region,
					Bucket: o.ToolkitBucket, Key: prefix + key}}})
			params[la.S3BucketParameter] = o.ToolkitBucket
			params[la.S3KeyParameter] = prefix + "||" + key
			params[la.ArtifactHashParameter] = la.SourceHash
		}
	}
	return nil
}

// selected keeps the jobs whose id matches one of ids (exactly, or by a prefix of ≥ 8 characters).
func (p *Plan) selected(ids []string) (*Plan, error) {
	out := &Plan{Parameters: p.Parameters}
	for _, want := range ids {
		found := false
		for _, j := range p.Jobs {
			if j.ID == want || (len(want) >= 8 && strings.HasPrefix(j.ID, want)) {
				out.Jobs = append(out.Jobs, j)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("no asset %q in the assembly", want)
		}
	}
	return out, nil
}
