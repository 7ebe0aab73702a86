package assembly

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

//go:generate ./schema/update.sh

// The schemas are the ones the CDK CLI validates with, vendored by schema/update.sh.
//
//go:embed schema/cloud-assembly.schema.json schema/assets.schema.json schema/version.json schema/SOURCE
var schemaFiles embed.FS

const (
	manifestSchemaURL = "mem:///cloud-assembly.schema.json"
	assetsSchemaURL   = "mem:///assets.schema.json"
	// maxReportedIssues keeps a badly broken manifest from burying the user in messages.
	maxReportedIssues = 20
)

// propertyDefinitions maps an artifact type to the schema definition of its properties. The
// schema lists them as an anyOf, which gives useless messages ("matches none of 5 shapes");
// validating against the one that applies tells the user which field is wrong.
var propertyDefinitions = map[string]string{
	TypeStack:             "AwsCloudFormationStackProperties",
	TypeAssetManifest:     "AssetManifestProperties",
	TypeTree:              "TreeArtifactProperties",
	TypeNestedAssembly:    "NestedCloudAssemblyProperties",
	TypeFeatureFlagReport: "FeatureFlagReportProperties",
}

type schemas struct {
	manifest   *jsonschema.Schema
	assets     *jsonschema.Schema
	properties map[string]*jsonschema.Schema
	revision   int
	source     string
}

var loadSchemas = sync.OnceValues(func() (*schemas, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	for url, name := range map[string]string{manifestSchemaURL: "cloud-assembly.schema.json", assetsSchemaURL: "assets.schema.json"} {
		raw, err := schemaFiles.ReadFile("schema/" + name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("embedded %s: %w", name, err)
		}
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("embedded %s: %w", name, err)
		}
	}
	s := &schemas{properties: map[string]*jsonschema.Schema{}}
	var err error
	if s.manifest, err = c.Compile(manifestSchemaURL); err != nil {
		return nil, fmt.Errorf("compile embedded manifest schema: %w", err)
	}
	if s.assets, err = c.Compile(assetsSchemaURL); err != nil {
		return nil, fmt.Errorf("compile embedded assets schema: %w", err)
	}
	for typ, def := range propertyDefinitions {
		if s.properties[typ], err = c.Compile(manifestSchemaURL + "#/definitions/" + def); err != nil {
			return nil, fmt.Errorf("compile embedded schema definition %s: %w", def, err)
		}
	}
	var version struct {
		Revision int `json:"revision"`
	}
	raw, err := schemaFiles.ReadFile("schema/version.json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &version); err != nil || version.Revision <= 0 {
		return nil, fmt.Errorf("embedded schema/version.json has no revision")
	}
	s.revision = version.Revision
	src, err := schemaFiles.ReadFile("schema/SOURCE")
	if err != nil {
		return nil, err
	}
	s.source = strings.TrimSpace(string(src))
	return s, nil
})

// SchemaInfo describes the cloud assembly schema this build of cdkbot was made with.
type SchemaInfo struct {
	MaxMajor int    // newest manifest schema major cdkbot reads; older ones always load
	Source   string // npm package and version the schema was vendored from
}

// Schema returns the embedded schema's facts. It panics only if the binary was built with a
// broken embedded schema, which the package tests rule out.
func Schema() SchemaInfo {
	s, err := loadSchemas()
	if err != nil {
		panic(err)
	}
	return SchemaInfo{MaxMajor: s.revision, Source: s.source}
}

var printer = message.NewPrinter(language.English)

// issuesOf flattens a validation error into leaf issues with JSON pointers. anyOf/oneOf failures
// are reported once at their own location: their branches' complaints are noise to a user.
func issuesOf(err error) []Issue {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Issue{{Message: err.Error()}}
	}
	var out []Issue
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			out = append(out, Issue{Pointer: pointer(e.InstanceLocation), Message: "matches none of the shapes the schema allows here"})
			return
		}
		if len(e.Causes) == 0 {
			out = append(out, Issue{Pointer: pointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(printer)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointer renders tokens as an RFC 6901 JSON pointer.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(t))
	}
	return b.String()
}

func capIssues(in []Issue) []Issue {
	if len(in) <= maxReportedIssues {
		return in
	}
	out := append([]Issue(nil), in[:maxReportedIssues]...)
	return append(out, Issue{Message: fmt.Sprintf("… and %d more", len(in)-maxReportedIssues)})
}
