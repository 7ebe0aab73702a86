package assembly

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

//go:generate ./schema/update.sh

// The schemas are the ones the CDK CLI validates with, vendored by schema/update.sh, and
// embedded without their annotations (descriptions are four fifths of their bytes, and every
// process that reads an assembly parses them): TestCompactSchemasAreCurrent keeps the two in step.
//
//go:embed schema/cloud-assembly.compact.json schema/assets.compact.json schema/version.json schema/SOURCE
var schemaFiles embed.FS

// compactName is the embedded form of a vendored schema file.
func compactName(name string) string {
	return strings.TrimSuffix(name, ".schema.json") + ".compact.json"
}

const (
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
	SchemaInfo
	manifest   *validator
	assets     *validator
	properties map[string]*validator
}

// loadSchemas compiles the embedded schemas once per process, on the first assembly read:
// commands that read none (version, a template diff) never pay for it.
var loadSchemas = sync.OnceValues(func() (*schemas, error) {
	info, err := loadSchemaInfo()
	if err != nil {
		return nil, err
	}
	docs := map[string]*schemaDoc{}
	for _, name := range []string{"cloud-assembly.schema.json", "assets.schema.json"} {
		raw, err := schemaFiles.ReadFile("schema/" + compactName(name))
		if err != nil {
			return nil, err
		}
		if docs[name], err = compileSchema(raw); err != nil {
			return nil, fmt.Errorf("embedded %s: %w", name, err)
		}
	}
	s := &schemas{SchemaInfo: info, properties: map[string]*validator{}}
	if s.manifest, err = newValidator(docs["cloud-assembly.schema.json"], ""); err != nil {
		return nil, fmt.Errorf("embedded manifest schema: %w", err)
	}
	if s.assets, err = newValidator(docs["assets.schema.json"], ""); err != nil {
		return nil, fmt.Errorf("embedded assets schema: %w", err)
	}
	for typ, def := range propertyDefinitions {
		if s.properties[typ], err = newValidator(docs["cloud-assembly.schema.json"], "/definitions/"+def); err != nil {
			return nil, fmt.Errorf("embedded schema definition %s: %w", def, err)
		}
	}
	return s, nil
})

var loadSchemaInfo = sync.OnceValues(func() (SchemaInfo, error) {
	var version struct {
		Revision int `json:"revision"`
	}
	raw, err := schemaFiles.ReadFile("schema/version.json")
	if err != nil {
		return SchemaInfo{}, err
	}
	if err := json.Unmarshal(raw, &version); err != nil || version.Revision <= 0 {
		return SchemaInfo{}, fmt.Errorf("embedded schema/version.json has no revision")
	}
	src, err := schemaFiles.ReadFile("schema/SOURCE")
	if err != nil {
		return SchemaInfo{}, err
	}
	return SchemaInfo{MaxMajor: version.Revision, Source: strings.TrimSpace(string(src))}, nil
})

// SchemaInfo describes the cloud assembly schema this build of cdkbot was made with.
type SchemaInfo struct {
	MaxMajor int    // newest manifest schema major cdkbot reads; older ones always load
	Source   string // npm package and version the schema was vendored from
}

// Schema returns the embedded schema's facts. It panics only if the binary was built with a
// broken embedded schema, which the package tests rule out.
func Schema() SchemaInfo {
	info, err := loadSchemaInfo()
	if err != nil {
		panic(err)
	}
	return info
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
