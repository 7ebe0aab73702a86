package assembly

import "encoding/json"

// The wire types mirror manifest.json and *.assets.json field for field. They are decoded only
// after schema validation and turned into the model types right away; nothing outside this
// package sees them.

type manifestJSON struct {
	Version           string                  `json:"version"`
	MinimumCLIVersion string                  `json:"minimumCliVersion"`
	Artifacts         map[string]artifactJSON `json:"artifacts"`
	Missing           []MissingContext        `json:"missing"`
	Runtime           *struct {
		Libraries map[string]string `json:"libraries"`
	} `json:"runtime"`
}

type artifactJSON struct {
	Type                   string          `json:"type"`
	Environment            string          `json:"environment"`
	Metadata               json.RawMessage `json:"metadata"` // decoded on first use (Stack.MetadataEntries)
	AdditionalMetadataFile string          `json:"additionalMetadataFile"`
	Dependencies           []string        `json:"dependencies"`
	Properties             json.RawMessage `json:"properties"`
	DisplayName            string          `json:"displayName"`
}

type stackPropertiesJSON struct {
	TemplateFile                      string            `json:"templateFile"`
	Parameters                        map[string]string `json:"parameters"`
	Tags                              map[string]string `json:"tags"`
	NotificationARNs                  []string          `json:"notificationArns"`
	StackName                         string            `json:"stackName"`
	TerminationProtection             bool              `json:"terminationProtection"`
	AssumeRoleARN                     string            `json:"assumeRoleArn"`
	AssumeRoleExternalID              string            `json:"assumeRoleExternalId"`
	AssumeRoleAdditionalOptions       map[string]any    `json:"assumeRoleAdditionalOptions"`
	CloudFormationExecutionRoleARN    string            `json:"cloudFormationExecutionRoleArn"`
	LookupRole                        *BootstrapRole    `json:"lookupRole"`
	StackTemplateAssetObjectURL       string            `json:"stackTemplateAssetObjectUrl"`
	RequiresBootstrapStackVersion     float64           `json:"requiresBootstrapStackVersion"`
	BootstrapStackVersionSSMParameter string            `json:"bootstrapStackVersionSsmParameter"`
	ValidateOnSynth                   bool              `json:"validateOnSynth"`
	// Not in the public schema, but written by some framework versions; read when present.
	AdditionalDependencies []string `json:"additionalDependencies"`
}

type fileArtifactPropertiesJSON struct {
	File                              string  `json:"file"`
	RequiresBootstrapStackVersion     float64 `json:"requiresBootstrapStackVersion"`
	BootstrapStackVersionSSMParameter string  `json:"bootstrapStackVersionSsmParameter"`
}

type nestedAssemblyPropertiesJSON struct {
	DirectoryName string `json:"directoryName"`
	DisplayName   string `json:"displayName"`
}

type assetManifestJSON struct {
	Version      string                          `json:"version"`
	Files        map[string]fileAssetJSON        `json:"files"`
	DockerImages map[string]dockerImageAssetJSON `json:"dockerImages"`
}

type fileAssetJSON struct {
	DisplayName  string                     `json:"displayName"`
	Source       FileSource                 `json:"source"`
	Destinations map[string]FileDestination `json:"destinations"`
}

type dockerImageAssetJSON struct {
	DisplayName  string                            `json:"displayName"`
	Source       DockerImageSource                 `json:"source"`
	Destinations map[string]DockerImageDestination `json:"destinations"`
}

type treeFileJSON struct {
	Version string    `json:"version"`
	Tree    *treeNode `json:"tree"`
}

type treeNode struct {
	ID            string               `json:"id"`
	Path          string               `json:"path"`
	Children      map[string]*treeNode `json:"children"`
	Attributes    map[string]any       `json:"attributes"`
	ConstructInfo *ConstructInfo       `json:"constructInfo"`
}
