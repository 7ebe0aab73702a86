package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

// Inspection is the documented, stable JSON shape of `cdkbot inspect` (see README). Field names
// are part of the contract; add fields, never rename them.
type Inspection struct {
	Assembly          string             `json:"assembly"`
	SchemaVersion     string             `json:"schemaVersion"`
	MinimumCLIVersion string             `json:"minimumCliVersion,omitempty"`
	Framework         assembly.Framework `json:"framework"`
	Mode              assembly.Mode      `json:"mode"`
	Nested            []InspectedNested  `json:"nestedAssemblies"`
	Stacks            []InspectedStack   `json:"stacks"`
	Assets            InspectedAssets    `json:"assets"`
	LegacyAssets      []InspectedLegacy  `json:"legacyAssets"`
	FeatureFlags      int                `json:"featureFlagsReported"`
	Missing           []string           `json:"missingContext"`
	Warnings          []assembly.Warning `json:"warnings"`
	Messages          []InspectedMessage `json:"messages"`
}

// InspectedNested is a nested cloud assembly (a Stage).
type InspectedNested struct {
	Path          string `json:"path"`
	Directory     string `json:"directory"`
	SchemaVersion string `json:"schemaVersion"`
}

// InspectedStack is one stack, wherever it is nested. Role ARNs and the template URL have their
// ${AWS::*} placeholders resolved for the stack's environment where it is known.
type InspectedStack struct {
	ID                                string            `json:"id"`
	StackName                         string            `json:"stackName"`
	DisplayName                       string            `json:"displayName"`
	NestedPath                        string            `json:"nestedPath"`
	Account                           string            `json:"account"`
	Region                            string            `json:"region"`
	TemplateFile                      string            `json:"templateFile"`
	TemplateSize                      int64             `json:"templateSize"`
	Dependencies                      []string          `json:"dependencies"`
	AssumeRoleARN                     string            `json:"assumeRoleArn"`
	CloudFormationExecutionRoleARN    string            `json:"cloudFormationExecutionRoleArn"`
	RequiresBootstrapStackVersion     int               `json:"requiresBootstrapStackVersion"`
	BootstrapStackVersionSSMParameter string            `json:"bootstrapStackVersionSsmParameter"`
	TemplateAssetURL                  string            `json:"templateAssetUrl"`
	TerminationProtection             bool              `json:"terminationProtection"`
	Tags                              map[string]string `json:"tags"`
	Parameters                        map[string]string `json:"parameters"`
	Mode                              assembly.Mode     `json:"mode"`
}

// InspectedAssets lists modern-mode assets with destinations resolved for their environment.
type InspectedAssets struct {
	Files  []InspectedFile  `json:"files"`
	Images []InspectedImage `json:"images"`
}

// InspectedFile is a file asset of an asset manifest.
type InspectedFile struct {
	ID           string                     `json:"id"`
	Manifest     string                     `json:"manifest"`
	SourcePath   string                     `json:"sourcePath,omitempty"`
	Executable   []string                   `json:"executable,omitempty"`
	Packaging    string                     `json:"packaging"`
	Destinations []assembly.FileDestination `json:"destinations"`
}

// InspectedImage is a container image asset of an asset manifest.
type InspectedImage struct {
	ID           string                            `json:"id"`
	Manifest     string                            `json:"manifest"`
	Directory    string                            `json:"directory,omitempty"`
	Executable   []string                          `json:"executable,omitempty"`
	DockerFile   string                            `json:"dockerFile,omitempty"`
	BuildArgs    map[string]string                 `json:"buildArgs,omitempty"`
	Destinations []assembly.DockerImageDestination `json:"destinations"`
}

// InspectedLegacy is a 1.0-mode asset declared through stack metadata.
type InspectedLegacy struct {
	Stack          string            `json:"stack"`
	ConstructPath  string            `json:"constructPath"`
	ID             string            `json:"id"`
	Packaging      string            `json:"packaging"`
	SourcePath     string            `json:"sourcePath"`
	Parameters     map[string]string `json:"parameters"`
	RepositoryName string            `json:"repositoryName,omitempty"`
	ImageTag       string            `json:"imageTag,omitempty"`
}

// InspectedMessage is a synth-time annotation of a stack's construct.
type InspectedMessage struct {
	Stack string `json:"stack"`
	assembly.Message
}

// inspectedDestination carries the destination id into JSON (the model keeps it out of the wire
// form because the manifest keys destinations by id).
type inspectedFileDestination struct {
	ID string `json:"id"`
	assembly.FileDestination
}

type inspectedImageDestination struct {
	ID string `json:"id"`
	assembly.DockerImageDestination
}

// NewInspection summarizes a loaded assembly. name is the directory as the user named it.
func NewInspection(a *assembly.Assembly, name string) Inspection {
	in := Inspection{
		Assembly: name, SchemaVersion: a.Version, MinimumCLIVersion: a.MinimumCLIVersion,
		Framework: a.Framework(), Mode: a.Mode(),
		Nested: []InspectedNested{}, Stacks: []InspectedStack{}, LegacyAssets: []InspectedLegacy{},
		Assets:  InspectedAssets{Files: []InspectedFile{}, Images: []InspectedImage{}},
		Missing: []string{}, Warnings: a.AllWarnings(), Messages: []InspectedMessage{},
	}
	if in.Warnings == nil {
		in.Warnings = []assembly.Warning{}
	}
	var walk func(*assembly.Assembly)
	walk = func(x *assembly.Assembly) {
		if x != a {
			in.Nested = append(in.Nested, InspectedNested{Path: x.Path, Directory: x.Dir, SchemaVersion: x.Version})
		}
		for _, mc := range x.Missing {
			in.Missing = append(in.Missing, mc.Key)
		}
		for _, r := range x.FeatureFlags {
			in.FeatureFlags += len(r.Flags)
		}
		for _, n := range x.Nested {
			walk(n)
		}
	}
	walk(a)
	for _, s := range a.AllStacks() {
		in.Stacks = append(in.Stacks, inspectStack(s))
		for _, m := range s.Messages() {
			in.Messages = append(in.Messages, InspectedMessage{Stack: s.QualifiedID(), Message: m})
		}
		for _, la := range s.LegacyAssets() {
			params := map[string]string{}
			for k, v := range map[string]string{"s3Bucket": la.S3BucketParameter, "s3Key": la.S3KeyParameter,
				"artifactHash": la.ArtifactHashParameter, "imageName": la.ImageNameParameter} {
				if v != "" {
					params[k] = v
				}
			}
			in.LegacyAssets = append(in.LegacyAssets, InspectedLegacy{Stack: la.Stack, ConstructPath: la.ConstructPath,
				ID: la.ID, Packaging: la.Packaging, SourcePath: la.ResolvedPath, Parameters: params,
				RepositoryName: la.RepositoryName, ImageTag: la.ImageTag})
		}
	}
	for _, m := range a.AllAssetManifests() {
		manifest := m.QualifiedID()
		for _, f := range m.Files {
			dests := make([]assembly.FileDestination, 0, len(f.Destinations))
			for _, d := range f.Destinations {
				dests = append(dests, d.Resolved(m.Environment))
			}
			packaging := f.Source.Packaging
			if packaging == "" {
				packaging = "file"
			}
			in.Assets.Files = append(in.Assets.Files, InspectedFile{ID: f.ID, Manifest: manifest,
				SourcePath: f.Source.ResolvedPath, Executable: f.Source.Executable, Packaging: packaging,
				Destinations: dests})
		}
		for _, img := range m.DockerImages {
			dests := make([]assembly.DockerImageDestination, 0, len(img.Destinations))
			for _, d := range img.Destinations {
				dests = append(dests, d.Resolved(m.Environment))
			}
			in.Assets.Images = append(in.Assets.Images, InspectedImage{ID: img.ID, Manifest: manifest,
				Directory: img.Source.ResolvedDirectory, Executable: img.Source.Executable,
				DockerFile: img.Source.DockerFile, BuildArgs: img.Source.DockerBuildArgs, Destinations: dests})
		}
	}
	sort.SliceStable(in.Assets.Files, func(i, j int) bool {
		return in.Assets.Files[i].Manifest < in.Assets.Files[j].Manifest
	})
	sort.SliceStable(in.Assets.Images, func(i, j int) bool {
		return in.Assets.Images[i].Manifest < in.Assets.Images[j].Manifest
	})
	return in
}

func inspectStack(s *assembly.Stack) InspectedStack {
	deps := append([]string{}, s.Dependencies...)
	sort.Strings(deps)
	tags, params := s.Tags, s.Parameters
	if tags == nil {
		tags = map[string]string{}
	}
	if params == nil {
		params = map[string]string{}
	}
	return InspectedStack{
		ID: s.ID, StackName: s.StackName, DisplayName: s.DisplayName, NestedPath: s.NestedPath,
		Account: s.Environment.Account, Region: s.Environment.Region,
		TemplateFile: s.TemplatePath, TemplateSize: s.TemplateSize, Dependencies: deps,
		Tags: tags, Parameters: params, Mode: s.Mode(),
		AssumeRoleARN:                     assembly.ResolvePlaceholders(s.AssumeRoleARN, s.Environment),
		CloudFormationExecutionRoleARN:    assembly.ResolvePlaceholders(s.CloudFormationExecutionRoleARN, s.Environment),
		RequiresBootstrapStackVersion:     s.RequiresBootstrapStackVersion,
		BootstrapStackVersionSSMParameter: s.BootstrapStackVersionSSMParameter,
		TemplateAssetURL:                  assembly.ResolvePlaceholders(s.StackTemplateAssetObjectURL, s.Environment),
		TerminationProtection:             s.TerminationProtection,
	}
}

// MarshalJSON puts destination ids into the JSON, which the model keeps out of the wire form.
func (f InspectedFile) MarshalJSON() ([]byte, error) {
	type plain InspectedFile
	dests := make([]inspectedFileDestination, 0, len(f.Destinations))
	for _, d := range f.Destinations {
		dests = append(dests, inspectedFileDestination{ID: d.ID, FileDestination: d})
	}
	return json.Marshal(struct {
		plain
		Destinations []inspectedFileDestination `json:"destinations"`
	}{plain(f), dests})
}

// MarshalJSON puts destination ids into the JSON, as for files.
func (img InspectedImage) MarshalJSON() ([]byte, error) {
	type plain InspectedImage
	dests := make([]inspectedImageDestination, 0, len(img.Destinations))
	for _, d := range img.Destinations {
		dests = append(dests, inspectedImageDestination{ID: d.ID, DockerImageDestination: d})
	}
	return json.Marshal(struct {
		plain
		Destinations []inspectedImageDestination `json:"destinations"`
	}{plain(img), dests})
}

// InspectionJSON writes the inspection as indented JSON.
func InspectionJSON(w io.Writer, in Inspection) error {
	return encodeJSON(w, in, "  ", false)
}

// InspectionText writes the inspection for a person at a terminal. Every value comes from the
// assembly: each is cleaned (Clean) before it is printed.
func InspectionText(w io.Writer, in Inspection) error {
	ew := &errWriter{w: w}
	fw := "unknown framework"
	if in.Framework.Name != "" {
		fw = in.Framework.String()
	}
	ew.printf("Cloud assembly %s\n", Clean(in.Assembly))
	ew.printf("  schema %s · %s · deployment mode %s", Clean(in.SchemaVersion), Clean(fw), Clean(string(in.Mode)))
	if in.MinimumCLIVersion != "" {
		ew.printf(" · needs CDK CLI ≥ %s", Clean(in.MinimumCLIVersion))
	}
	ew.printf("\n")
	for _, n := range in.Nested {
		ew.printf("  stage %s (%s, schema %s)\n", Clean(n.Path), Clean(n.Directory), Clean(n.SchemaVersion))
	}

	ew.printf("\nStacks (%d)\n", len(in.Stacks))
	for _, s := range in.Stacks {
		name := s.DisplayName
		if s.NestedPath != "" && !strings.HasPrefix(name, s.NestedPath+"/") {
			name = s.NestedPath + "/" + name
		}
		ew.printf("  %s\n", Clean(name))
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		row := func(k, v string) {
			if v != "" {
				fmt.Fprintf(tw, "    %s\t%s\n", k, Clean(v))
			}
		}
		row("stack name", s.StackName)
		row("environment", "aws://"+s.Account+"/"+s.Region)
		row("template", fmt.Sprintf("%s (%s)", s.TemplateFile, byteSize(s.TemplateSize)))
		row("depends on", strings.Join(s.Dependencies, ", "))
		row("deploy role", s.AssumeRoleARN)
		row("execution role", s.CloudFormationExecutionRoleARN)
		if s.RequiresBootstrapStackVersion > 0 {
			row("bootstrap", fmt.Sprintf("version ≥ %d (read from %s)",
				s.RequiresBootstrapStackVersion, s.BootstrapStackVersionSSMParameter))
		}
		row("template asset", s.TemplateAssetURL)
		if s.TerminationProtection {
			row("termination", "protected")
		}
		row("tags", joinMap(s.Tags))
		_ = tw.Flush()
	}

	if n := len(in.Assets.Files) + len(in.Assets.Images); n > 0 {
		ew.printf("\nAssets (%d)\n", n)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		for _, f := range in.Assets.Files {
			src := f.SourcePath
			if src == "" {
				src = "$ " + strings.Join(f.Executable, " ")
			}
			for _, d := range f.Destinations {
				fmt.Fprintf(tw, "  file %s\t%s\t%s\t→ %s\n", Clean(shortID(f.ID)), Clean(f.Packaging), Clean(src),
					Clean("s3://"+d.BucketName+"/"+d.ObjectKey))
			}
		}
		for _, img := range in.Assets.Images {
			src := img.Directory
			if src == "" {
				src = "$ " + strings.Join(img.Executable, " ")
			}
			for _, d := range img.Destinations {
				fmt.Fprintf(tw, "  image %s\tdocker\t%s\t→ %s\n", Clean(shortID(img.ID)), Clean(src),
					Clean(d.RepositoryName+":"+d.ImageTag))
			}
		}
		_ = tw.Flush()
	}
	if len(in.LegacyAssets) > 0 {
		ew.printf("\nLegacy assets (%d, passed as stack parameters)\n", len(in.LegacyAssets))
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		for _, la := range in.LegacyAssets {
			fmt.Fprintf(tw, "  %s %s\t%s\t%s\n", Clean(la.Packaging), Clean(shortID(la.ID)), Clean(la.Stack),
				Clean(la.SourcePath))
		}
		_ = tw.Flush()
	}
	if len(in.Messages) > 0 {
		ew.printf("\nMessages from synthesis (%d)\n", len(in.Messages))
		for _, m := range in.Messages {
			ew.printf("  [%s] %s %s: %s\n", Clean(m.Level), Clean(m.Stack), Clean(m.Path), Clean(m.Text))
		}
	}
	if len(in.Warnings) > 0 {
		ew.printf("\nWarnings (%d)\n", len(in.Warnings))
		for _, wn := range in.Warnings {
			ew.printf("  %s\n", Clean(wn.String()))
		}
	}
	return ew.err
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func joinMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// errWriter keeps the first write error so a view can write freely and report once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
