package assembly

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
)

// Artifact types of the cloud assembly protocol.
const (
	TypeStack             = "aws:cloudformation:stack"
	TypeAssetManifest     = "cdk:asset-manifest"
	TypeTree              = "cdk:tree"
	TypeNestedAssembly    = "cdk:cloud-assembly"
	TypeFeatureFlagReport = "cdk:feature-flag-report"
	TypeNone              = "none"
)

// Metadata entry types cdkbot interprets.
const (
	MetadataAsset     = "aws:cdk:asset"
	MetadataLogicalID = "aws:cdk:logicalId"
	MetadataInfo      = "aws:cdk:info"
	MetadataWarning   = "aws:cdk:warning"
	MetadataError     = "aws:cdk:error"
)

// Mode is how an assembly expects to be deployed: the legacy protocol ("1.0": assets as stack
// parameters, default credentials, the CDKToolkit bucket) or the modern one ("2.0": asset
// manifests, bootstrap roles, versioned bootstrap stack).
type Mode string

// The deployment modes. ModeMixed is an assembly whose stacks disagree, e.g. one stack with a
// custom legacy synthesizer in a modern app.
const (
	ModeLegacy Mode = "1.0"
	ModeModern Mode = "2.0"
	ModeMixed  Mode = "mixed"
)

// Assembly is one cloud assembly directory; nested assemblies (Stages) hang below it.
type Assembly struct {
	// Dir is the directory of this assembly, slash-separated and relative to the root assembly
	// ("." for the root).
	Dir string
	// Path is the Stage path of a nested assembly ("Prod", "Prod/Eu"), "" for the root.
	Path              string
	ManifestFile      string // root-relative path of manifest.json
	Version           string // the manifest's cloud assembly schema version
	MinimumCLIVersion string
	RuntimeLibraries  map[string]string // from manifest "runtime" (old frameworks only)

	Stacks         []*Stack            // sorted by artifact id
	AssetManifests []*AssetManifest    // sorted by artifact id
	Nested         []*Assembly         // sorted by artifact id
	FeatureFlags   []FeatureFlagReport // sorted by artifact id
	Others         []OtherArtifact     // "none" and unknown types, sorted by artifact id
	TreeFile       string              // root-relative path of tree.json, "" if none
	Missing        []MissingContext
	Warnings       []Warning

	fsys     fs.FS
	root     string // how the user named the root assembly's directory, for messages
	treeOnce sync.Once
	tree     *TreeNode
	treeErr  error
}

// Warning is something worth telling the user that does not stop cdkbot.
type Warning struct {
	File    string `json:"file"`
	Pointer string `json:"pointer,omitempty"`
	Message string `json:"message"`
}

func (w Warning) String() string {
	if w.Pointer != "" {
		return fmt.Sprintf("%s: %s: %s", w.File, w.Pointer, w.Message)
	}
	return fmt.Sprintf("%s: %s", w.File, w.Message)
}

// OtherArtifact is an artifact cdkbot keeps but does not interpret.
type OtherArtifact struct {
	ID         string
	Type       string
	Properties json.RawMessage
}

// MissingContext is a context lookup the app could not resolve at synth time. An assembly with
// missing context is incomplete and must not be deployed.
type MissingContext struct {
	Key      string         `json:"key"`
	Provider string         `json:"provider"`
	Props    map[string]any `json:"props"`
}

// MetadataEntry is one entry of an artifact's metadata, keyed in the manifest by construct path.
type MetadataEntry struct {
	Type  string          `json:"type"`
	Data  json.RawMessage `json:"data,omitempty"`
	Trace []string        `json:"trace,omitempty"`
}

// BootstrapRole is a role the toolkit assumes for a purpose, such as context lookups.
type BootstrapRole struct {
	ARN                               string         `json:"arn"`
	AssumeRoleExternalID              string         `json:"assumeRoleExternalId,omitempty"`
	AssumeRoleAdditionalOptions       map[string]any `json:"assumeRoleAdditionalOptions,omitempty"`
	RequiresBootstrapStackVersion     int            `json:"requiresBootstrapStackVersion,omitempty"`
	BootstrapStackVersionSSMParameter string         `json:"bootstrapStackVersionSsmParameter,omitempty"`
}

// FeatureFlagReport is the framework's account of its feature flags at synth time.
type FeatureFlagReport struct {
	ArtifactID string
	Module     string
	Flags      []FeatureFlag // sorted by name
}

// FeatureFlag is one flag; values are whatever JSON the framework wrote.
type FeatureFlag struct {
	Name                    string
	UserValue               any // nil when the user did not set it
	RecommendedValue        any
	UnconfiguredBehavesLike any
	Explanation             string
}

// Stacks returns every stack of the assembly and of its nested assemblies, depth first.
func (a *Assembly) AllStacks() []*Stack {
	out := append([]*Stack(nil), a.Stacks...)
	for _, n := range a.Nested {
		out = append(out, n.AllStacks()...)
	}
	return out
}

// AllAssetManifests returns every asset manifest of the assembly and its nested assemblies.
func (a *Assembly) AllAssetManifests() []*AssetManifest {
	out := append([]*AssetManifest(nil), a.AssetManifests...)
	for _, n := range a.Nested {
		out = append(out, n.AllAssetManifests()...)
	}
	return out
}

// AllWarnings returns the warnings of the assembly and its nested assemblies.
func (a *Assembly) AllWarnings() []Warning {
	out := append([]Warning(nil), a.Warnings...)
	for _, n := range a.Nested {
		out = append(out, n.AllWarnings()...)
	}
	return out
}

// Mode reports the deployment protocol the assembly's stacks expect. An assembly without stacks
// is modern when it has asset manifests and legacy otherwise.
func (a *Assembly) Mode() Mode {
	stacks := a.AllStacks()
	if len(stacks) == 0 {
		if len(a.AllAssetManifests()) > 0 {
			return ModeModern
		}
		return ModeLegacy
	}
	mode := stacks[0].Mode()
	for _, s := range stacks[1:] {
		if s.Mode() != mode {
			return ModeMixed
		}
	}
	return mode
}

// ReadFile reads a file of the assembly by its root-relative path, of at most limit bytes
// (MaxFileSize, or less for a file its reader bounds tighter).
func (a *Assembly) ReadFile(name string, limit int64) ([]byte, error) {
	return readRegular(a.fsys, name, limit)
}

// join resolves a path written in this assembly's manifest to a root-relative path.
func (a *Assembly) join(p string) string { return path.Join(a.Dir, p) }

// Stack is a CloudFormation stack artifact.
type Stack struct {
	ID          string // artifact id, unique within its assembly
	DisplayName string // what the CLI shows; defaults to the artifact id
	StackName   string // the CloudFormation stack name; defaults to the artifact id
	Environment Environment
	// NestedPath is the Stage path of the assembly holding the stack ("" at the top).
	NestedPath string

	TemplateFile string // as written in the manifest, relative to the stack's assembly
	TemplatePath string // root-relative
	TemplateSize int64  // bytes; templates over 51,200 bytes cannot be passed inline

	Parameters                        map[string]string
	Tags                              map[string]string
	NotificationARNs                  []string
	TerminationProtection             bool
	AssumeRoleARN                     string
	AssumeRoleExternalID              string
	AssumeRoleAdditionalOptions       map[string]any
	CloudFormationExecutionRoleARN    string
	LookupRole                        *BootstrapRole
	StackTemplateAssetObjectURL       string
	RequiresBootstrapStackVersion     int // 0: no requirement
	BootstrapStackVersionSSMParameter string
	ValidateOnSynth                   bool
	Dependencies                      []string // artifact ids in the same assembly
	AdditionalDependencies            []string
	// Metadata by construct path, for a Stack built by hand. Load leaves it nil: the metadata of
	// a loaded stack (the manifest's and additionalMetadataFile's, merged) is decoded on first
	// use, by MetadataEntries and the methods that read it, since most commands read little of it.
	Metadata map[string][]MetadataEntry

	metaInline json.RawMessage // the manifest's metadata of the stack, undecoded
	metaFile   string          // root-relative path of additionalMetadataFile, checked at load
	metaOnce   sync.Once
	meta       map[string][]MetadataEntry
	metaErr    error

	assembly     *Assembly
	templateOnce sync.Once
	template     map[string]any
	templateErr  error
}

// Mode is ModeModern when the stack is deployed through bootstrap roles or asset manifests.
func (s *Stack) Mode() Mode {
	if s.AssumeRoleARN != "" || s.RequiresBootstrapStackVersion > 0 || s.StackTemplateAssetObjectURL != "" {
		return ModeModern
	}
	for _, d := range s.Dependencies {
		for _, m := range s.assembly.AssetManifests {
			if m.ArtifactID == d {
				return ModeModern
			}
		}
	}
	return ModeLegacy
}

// QualifiedID names the stack uniquely across nested assemblies ("Prod/Api" for stack Api in
// Stage Prod).
func (s *Stack) QualifiedID() string {
	if s.NestedPath == "" {
		return s.ID
	}
	return s.NestedPath + "/" + s.ID
}

// Matches reports whether a glob (path.Match syntax) matches the stack's qualified id, display
// name or CloudFormation stack name: the names a user may select a stack by.
func (s *Stack) Matches(glob string) bool {
	for _, name := range []string{s.QualifiedID(), s.DisplayName, s.StackName} {
		if ok, _ := path.Match(glob, name); ok {
			return true
		}
	}
	return false
}

// TemplateBytes reads the template file.
func (s *Stack) TemplateBytes() ([]byte, error) {
	b, err := readRegular(s.assembly.fsys, s.TemplatePath, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("read template of stack %s: %w", s.QualifiedID(), err)
	}
	return b, nil
}

// Template parses the template on first use and caches it; numbers stay json.Number so that
// "10" and 10.0 keep their spelling for the diff.
func (s *Stack) Template() (map[string]any, error) {
	s.templateOnce.Do(func() {
		b, err := s.TemplateBytes()
		if err != nil {
			s.templateErr = err
			return
		}
		v, err := decodeGeneric(s.TemplatePath, b)
		if err != nil {
			s.templateErr = err
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			s.templateErr = newError(s.TemplatePath, "/",
				"A CloudFormation template is a JSON object. Synthesize the app again.", "the template is not a JSON object")
			return
		}
		s.template = m
	})
	return s.template, s.templateErr
}

// Message is an annotation (info, warning, error) the app attached to a construct at synth time.
type Message struct {
	Level string `json:"level"` // info | warning | error
	Path  string `json:"path"`
	Text  string `json:"message"`
}

// Messages returns the stack's synth-time annotations, sorted by path.
func (s *Stack) Messages() []Message {
	var out []Message
	md, err := s.MetadataEntries()
	if err != nil {
		// Unreadable metadata may hide error annotations: an error, so the stack is incomplete.
		out = append(out, Message{Level: "error", Path: "/", Text: err.Error()})
	}
	for _, p := range slices.Sorted(maps.Keys(md)) {
		for _, e := range md[p] {
			level := ""
			switch e.Type {
			case MetadataInfo:
				level = "info"
			case MetadataWarning:
				level = "warning"
			case MetadataError:
				level = "error"
			default:
				continue
			}
			var text string
			if json.Unmarshal(e.Data, &text) != nil {
				text = string(e.Data)
			}
			out = append(out, Message{Level: level, Path: p, Text: text})
		}
	}
	return out
}

// Incomplete says why the stack must not be deployed as synthesized, one reason each: context
// lookups its app could not resolve (the assembly's `missing`, here or at the top) and error
// annotations on its constructs. The CDK CLI refuses to deploy both. root is the top assembly.
func (root *Assembly) Incomplete(s *Stack) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range []*Assembly{root, s.assembly} {
		if a == nil {
			continue
		}
		for _, m := range a.Missing {
			if seen[m.Key] {
				continue
			}
			seen[m.Key] = true
			out = append(out, fmt.Sprintf("context lookup %s (%s) is unresolved: "+
				"synthesize with credentials that can do the lookup, then commit cdk.context.json", m.Key, m.Provider))
		}
	}
	for _, m := range s.Messages() {
		if m.Level == "error" {
			out = append(out, fmt.Sprintf("%s: error at %s: %s", s.QualifiedID(), m.Path, m.Text))
		}
	}
	return out
}

// LogicalIDs maps construct paths to the logical ids of the template resources they produced.
func (s *Stack) LogicalIDs() map[string]string {
	out := map[string]string{}
	md, _ := s.MetadataEntries()
	for p, entries := range md {
		for _, e := range entries {
			var id string
			if e.Type == MetadataLogicalID && json.Unmarshal(e.Data, &id) == nil {
				out[p] = id
			}
		}
	}
	return out
}

// Environment is the AWS account and region a stack or asset manifest targets. Either may be
// unknown (an environment-agnostic stack), resolved at deploy time from the credentials.
type Environment struct {
	Account string
	Region  string
}

// Placeholder values the framework writes for environment-agnostic artifacts.
const (
	UnknownAccount = "unknown-account"
	UnknownRegion  = "unknown-region"
)

// ParseEnvironment parses "aws://ACCOUNT/REGION".
func ParseEnvironment(s string) (Environment, error) {
	rest, ok := strings.CutPrefix(s, "aws://")
	account, region, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || account == "" || region == "" || strings.Contains(region, "/") {
		return Environment{}, fmt.Errorf("environment %q is not of the form aws://ACCOUNT/REGION", s)
	}
	return Environment{Account: account, Region: region}, nil
}

func (e Environment) String() string {
	if e.Account == "" && e.Region == "" {
		return ""
	}
	return "aws://" + e.Account + "/" + e.Region
}

// AccountKnown is false for environment-agnostic artifacts.
func (e Environment) AccountKnown() bool { return e.Account != "" && e.Account != UnknownAccount }

// RegionKnown is false for environment-agnostic artifacts.
func (e Environment) RegionKnown() bool { return e.Region != "" && e.Region != UnknownRegion }

// Partition returns the AWS partition of the region, "" when the region is unknown.
func (e Environment) Partition() string {
	if !e.RegionKnown() {
		return ""
	}
	return PartitionOf(e.Region)
}

// PartitionOf returns the AWS partition a region belongs to.
func PartitionOf(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	case strings.HasPrefix(region, "us-isob-"):
		return "aws-iso-b"
	case strings.HasPrefix(region, "us-iso-"):
		return "aws-iso"
	case strings.HasPrefix(region, "eu-isoe-"):
		return "aws-iso-e"
	case strings.HasPrefix(region, "us-isof-"):
		return "aws-iso-f"
	}
	return "aws"
}

// ResolvePlaceholders replaces ${AWS::AccountId}, ${AWS::Region} and ${AWS::Partition} with the
// environment's values. Placeholders whose value is unknown are left in place, so an
// environment-agnostic artifact stays visibly unresolved instead of silently wrong.
func ResolvePlaceholders(s string, env Environment) string {
	if !strings.Contains(s, "${AWS::") {
		return s
	}
	var pairs []string
	if env.AccountKnown() {
		pairs = append(pairs, "${AWS::AccountId}", env.Account)
	}
	if env.RegionKnown() {
		pairs = append(pairs, "${AWS::Region}", env.Region, "${AWS::Partition}", env.Partition())
	}
	if len(pairs) == 0 {
		return s
	}
	return strings.NewReplacer(pairs...).Replace(s)
}
