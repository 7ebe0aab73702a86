package assembly

import (
	"encoding/json"
	"maps"
	"slices"
)

// AssetManifest is a cdk:asset-manifest artifact: the files and images to publish before the
// stacks that depend on it deploy.
type AssetManifest struct {
	ArtifactID  string
	NestedPath  string // Stage path of the assembly holding the manifest ("" at the top)
	File        string // root-relative path of the *.assets.json file
	Environment Environment
	Version     string

	RequiresBootstrapStackVersion     int
	BootstrapStackVersionSSMParameter string

	Files        []FileAsset        // sorted by id
	DockerImages []DockerImageAsset // sorted by id
}

// QualifiedID names the manifest uniquely across nested assemblies.
func (m *AssetManifest) QualifiedID() string {
	if m.NestedPath == "" {
		return m.ArtifactID
	}
	return m.NestedPath + "/" + m.ArtifactID
}

// FileAsset is a file or directory to upload to S3.
type FileAsset struct {
	ID           string
	DisplayName  string
	Source       FileSource
	Destinations []FileDestination // sorted by id
}

// FileSource says where a file asset comes from. Exactly one of Path and Executable is set.
type FileSource struct {
	Path       string   `json:"path,omitempty"`       // as written, relative to the manifest's assembly
	Packaging  string   `json:"packaging,omitempty"`  // "file" (default) or "zip"
	Executable []string `json:"executable,omitempty"` // a command whose stdout is the file's path
	// ResolvedPath is Path relative to the root assembly, after checking that it stays inside it.
	ResolvedPath string `json:"-"`
}

// FileDestination is one bucket and key a file asset is published to.
type FileDestination struct {
	ID                          string         `json:"-"`
	BucketName                  string         `json:"bucketName"`
	ObjectKey                   string         `json:"objectKey"`
	Region                      string         `json:"region,omitempty"`
	AssumeRoleARN               string         `json:"assumeRoleArn,omitempty"`
	AssumeRoleExternalID        string         `json:"assumeRoleExternalId,omitempty"`
	AssumeRoleAdditionalOptions map[string]any `json:"assumeRoleAdditionalOptions,omitempty"`
}

// DockerImageAsset is an image to build and push to ECR.
type DockerImageAsset struct {
	ID           string
	DisplayName  string
	Source       DockerImageSource
	Destinations []DockerImageDestination // sorted by id
}

// DockerImageSource is how to build an image. Exactly one of Directory and Executable is set.
type DockerImageSource struct {
	Directory           string              `json:"directory,omitempty"`
	Executable          []string            `json:"executable,omitempty"`
	DockerFile          string              `json:"dockerFile,omitempty"`
	DockerBuildTarget   string              `json:"dockerBuildTarget,omitempty"`
	DockerBuildArgs     map[string]string   `json:"dockerBuildArgs,omitempty"`
	DockerBuildContexts map[string]string   `json:"dockerBuildContexts,omitempty"`
	DockerBuildSSH      string              `json:"dockerBuildSsh,omitempty"`
	DockerBuildSecrets  map[string]string   `json:"dockerBuildSecrets,omitempty"`
	NetworkMode         string              `json:"networkMode,omitempty"`
	Platform            string              `json:"platform,omitempty"`
	DockerOutputs       []string            `json:"dockerOutputs,omitempty"`
	CacheFrom           []DockerCacheOption `json:"cacheFrom,omitempty"`
	CacheTo             *DockerCacheOption  `json:"cacheTo,omitempty"`
	CacheDisabled       bool                `json:"cacheDisabled,omitempty"`
	// ResolvedDirectory is Directory relative to the root assembly, after the safety checks.
	ResolvedDirectory string `json:"-"`
}

// DockerCacheOption is a --cache-from / --cache-to setting.
type DockerCacheOption struct {
	Type   string            `json:"type"`
	Params map[string]string `json:"params,omitempty"`
}

// DockerImageDestination is one ECR repository and tag an image is pushed to.
type DockerImageDestination struct {
	ID                          string         `json:"-"`
	RepositoryName              string         `json:"repositoryName"`
	ImageTag                    string         `json:"imageTag"`
	Region                      string         `json:"region,omitempty"`
	AssumeRoleARN               string         `json:"assumeRoleArn,omitempty"`
	AssumeRoleExternalID        string         `json:"assumeRoleExternalId,omitempty"`
	AssumeRoleAdditionalOptions map[string]any `json:"assumeRoleAdditionalOptions,omitempty"`
}

// destinationEnv is the environment a destination's placeholders resolve in: the manifest's,
// with the destination's own region taking precedence.
func destinationEnv(env Environment, region string) Environment {
	if region != "" {
		env.Region = region
	}
	return env
}

// Resolved returns the destination with ${AWS::*} placeholders resolved for env.
func (d FileDestination) Resolved(env Environment) FileDestination {
	e := destinationEnv(env, d.Region)
	d.BucketName = ResolvePlaceholders(d.BucketName, e)
	d.ObjectKey = ResolvePlaceholders(d.ObjectKey, e)
	d.Region = ResolvePlaceholders(d.Region, e)
	d.AssumeRoleARN = ResolvePlaceholders(d.AssumeRoleARN, e)
	d.AssumeRoleExternalID = ResolvePlaceholders(d.AssumeRoleExternalID, e)
	return d
}

// Resolved returns the destination with ${AWS::*} placeholders resolved for env.
func (d DockerImageDestination) Resolved(env Environment) DockerImageDestination {
	e := destinationEnv(env, d.Region)
	d.RepositoryName = ResolvePlaceholders(d.RepositoryName, e)
	d.ImageTag = ResolvePlaceholders(d.ImageTag, e)
	d.Region = ResolvePlaceholders(d.Region, e)
	d.AssumeRoleARN = ResolvePlaceholders(d.AssumeRoleARN, e)
	d.AssumeRoleExternalID = ResolvePlaceholders(d.AssumeRoleExternalID, e)
	return d
}

// LegacyAsset is an asset declared the 1.0 way: stack metadata naming the template parameters
// through which the toolkit passes the asset's location at deploy time.
type LegacyAsset struct {
	Stack         string // qualified stack id
	ConstructPath string
	ID            string `json:"id"`
	Packaging     string `json:"packaging"` // file | zip | container-image
	Path          string `json:"path"`
	SourceHash    string `json:"sourceHash"`
	// ResolvedPath is Path relative to the root assembly.
	ResolvedPath string `json:"-"`

	// File assets.
	S3BucketParameter     string `json:"s3BucketParameter,omitempty"`
	S3KeyParameter        string `json:"s3KeyParameter,omitempty"`
	ArtifactHashParameter string `json:"artifactHashParameter,omitempty"`

	// Container images.
	ImageNameParameter string            `json:"imageNameParameter,omitempty"`
	RepositoryName     string            `json:"repositoryName,omitempty"`
	ImageTag           string            `json:"imageTag,omitempty"`
	BuildArgs          map[string]string `json:"buildArgs,omitempty"`
	Target             string            `json:"target,omitempty"`
	File               string            `json:"file,omitempty"`
	NetworkMode        string            `json:"networkMode,omitempty"`
	Platform           string            `json:"platform,omitempty"`
}

// LegacyAssets returns the stack's aws:cdk:asset metadata entries, sorted by construct path.
// Their source paths are checked (inside the assembly) before any is returned.
func (s *Stack) LegacyAssets() []LegacyAsset {
	var out []LegacyAsset
	md, _ := s.MetadataEntries() // entries whose path is unsafe are never returned
	for _, p := range slices.Sorted(maps.Keys(md)) {
		for _, e := range md[p] {
			if e.Type != MetadataAsset {
				continue
			}
			var la LegacyAsset
			if json.Unmarshal(e.Data, &la) != nil {
				continue
			}
			la.Stack = s.QualifiedID()
			la.ConstructPath = p
			la.ResolvedPath = s.assembly.join(la.Path)
			out = append(out, la)
		}
	}
	return out
}

// sortedValues turns a map keyed by id into a slice sorted by id, with the id set on each value.
func sortedValues[V any](m map[string]V, setID func(*V, string)) []V {
	out := make([]V, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		setID(&v, k)
		out = append(out, v)
	}
	return out
}
