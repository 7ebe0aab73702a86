package compat

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/semver"
)

// Status of one check.
type Status string

// Statuses, in rising severity.
const (
	Pass Status = "pass"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Check is one compatibility finding for a PR: a status, what was found and what to do.
type Check struct {
	Name    string `json:"name"`
	Status  Status `json:"status"`
	Finding string `json:"finding"`
	Action  string `json:"action,omitempty"`
}

// RepoFacts are what the repository pins, read by the caller from package.json / the lock file
// and cdk.json. Empty fields mean "not pinned".
type RepoFacts struct {
	CLIVersion       string         // the aws-cdk CLI version the repo uses
	CLISource        string         // where it was read ("package-lock.json", "package.json")
	FrameworkVersion string         // the aws-cdk-lib (or @aws-cdk/core) version the repo pins
	Context          map[string]any // cdk.json "context"
}

// BootstrapVersions reads the bootstrap stack version deployed in an environment (the SSM
// parameter the stacks name). The AWS adapter implements it; ok is false when unknown.
type BootstrapVersions interface {
	DeployedBootstrapVersion(env assembly.Environment, parameter string) (version int, ok bool, err error)
}

// AssemblyInput is what the assembly checks look at. Base may be nil (first deployment).
type AssemblyInput struct {
	Base, Head    *assembly.Assembly
	Repo          RepoFacts
	ToolSchemaMax int               // newest schema major this cdkbot reads
	Deployed      BootstrapVersions // optional
}

// CheckAssemblies runs every check of a PR's assemblies.
func CheckAssemblies(in AssemblyInput) []Check {
	checks := []Check{toolkitGate(in), cliCheck(in)}
	checks = append(checks, bootstrapChecks(in)...)
	checks = append(checks, modeCheck(in), frameworkCheck(in), schemaCheck(in))
	checks = append(checks, featureFlagChecks(in)...)
	return checks
}

// Worst is the most severe status of the checks.
func Worst(checks []Check) Status {
	worst := Pass
	for _, c := range checks {
		if c.Status == Fail || (c.Status == Warn && worst == Pass) {
			worst = c.Status
		}
	}
	return worst
}

func schemaMajor(a *assembly.Assembly) (uint64, bool) {
	v, err := semver.Parse(a.Version)
	if err != nil {
		return 0, false
	}
	return v.Major(), true
}

func toolkitGate(in AssemblyInput) Check {
	c := Check{Name: "toolkit"}
	major, ok := schemaMajor(in.Head)
	switch {
	case !ok:
		c.Status, c.Finding = Warn, fmt.Sprintf("head assembly schema version %q is not a semantic version", in.Head.Version)
	case int(major) > in.ToolSchemaMax:
		c.Status = Fail
		c.Finding = fmt.Sprintf("head is synthesized with cloud assembly schema %s; this cdkbot reads up to %d.x",
			in.Head.Version, in.ToolSchemaMax)
		c.Action = "Upgrade cdkbot (the action's version) to a release that reads this schema"
	default:
		c.Status, c.Finding = Pass, fmt.Sprintf("schema %s is readable (cdkbot reads up to %d.x)",
			in.Head.Version, in.ToolSchemaMax)
	}
	return c
}

// cliCheck: the CLI the repo pins must be at least what the framework requires.
func cliCheck(in AssemblyInput) Check {
	c := Check{Name: "cli"}
	required, why := in.Head.MinimumCLIVersion, "the assembly's minimumCliVersion"
	if required == "" {
		required, why = in.Head.Framework().Version, "the framework version"
	}
	if in.Repo.CLIVersion == "" {
		c.Status, c.Finding = Pass, "the repository pins no aws-cdk CLI; cdkbot deploys with its own toolkit"
		return c
	}
	have, err := semver.Parse(in.Repo.CLIVersion)
	need, err2 := semver.Parse(required)
	if err != nil || err2 != nil {
		c.Status = Warn
		c.Finding = fmt.Sprintf("cannot compare the pinned aws-cdk %q with %s %q", in.Repo.CLIVersion, why, required)
		return c
	}
	if have.Less(need) {
		// minimumCliVersion names the first CLI of the assembly's exact schema; a CLI refuses
		// only a newer schema major than the one it bundles, so an older CLI of the same
		// major still reads the assembly.
		if major, schema, ok := cliSchemaMajor(have); ok {
			if head, err := semver.Parse(in.Head.Version); err == nil && int(head.Major()) <= major {
				c.Status = Pass
				c.Finding = fmt.Sprintf("aws-cdk %s (%s) is older than %s %s, "+
					"but it reads cloud assembly schema %d.x (built with %s) and the head's is %s",
					have, in.Repo.CLISource, why, need, major, schema, in.Head.Version)
				return c
			}
		}
		c.Status = Fail
		c.Finding = fmt.Sprintf("aws-cdk %s (%s) is older than %s %s", have, in.Repo.CLISource, why, need)
		c.Action = fmt.Sprintf("Upgrade aws-cdk to ≥ %s in package.json", need)
		return c
	}
	c.Status, c.Finding = Pass, fmt.Sprintf("aws-cdk %s satisfies %s %s", have, why, need)
	return c
}

//go:embed cliversions.tsv
var cliVersionsTSV string

var (
	cliSchemasOnce sync.Once
	cliSchemas     map[string]string
)

// cliSchemaMajor is the cloud assembly schema major an aws-cdk CLI release reads (the schema it
// was built with, cliversions.tsv), for releases since 2.1000.0.
func cliSchemaMajor(v semver.Version) (int, string, bool) {
	cliSchemasOnce.Do(func() {
		cliSchemas = map[string]string{}
		for _, line := range strings.Split(cliVersionsTSV, "\n") {
			if cli, schema, ok := strings.Cut(line, "\t"); ok && !strings.HasPrefix(line, "#") {
				cliSchemas[cli] = strings.TrimSpace(schema)
			}
		}
	})
	schema, ok := cliSchemas[v.String()]
	if !ok {
		return 0, "", false
	}
	sv, err := semver.Parse(schema)
	if err != nil {
		return 0, "", false
	}
	return int(sv.Major()), schema, true
}

// bootstrapRequirement is the highest bootstrap version any stack of an environment needs.
type bootstrapRequirement struct {
	env       assembly.Environment
	version   int
	parameter string
}

func requirements(a *assembly.Assembly) map[string]bootstrapRequirement {
	out := map[string]bootstrapRequirement{}
	if a == nil {
		return out
	}
	for _, s := range a.AllStacks() {
		if s.RequiresBootstrapStackVersion == 0 {
			continue
		}
		key := s.Environment.String()
		if r, ok := out[key]; !ok || s.RequiresBootstrapStackVersion > r.version {
			out[key] = bootstrapRequirement{s.Environment, s.RequiresBootstrapStackVersion, s.BootstrapStackVersionSSMParameter}
		}
	}
	return out
}

func bootstrapChecks(in AssemblyInput) []Check {
	head, base := requirements(in.Head), requirements(in.Base)
	var out []Check
	keys := make([]string, 0, len(head))
	for k := range head {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h := head[k]
		c := Check{Name: "bootstrap " + k, Status: Pass, Finding: fmt.Sprintf("needs bootstrap version ≥ %d", h.version)}
		bootstrapCmd := "Run `cdk bootstrap " + h.env.String() + "` before merging"
		if !h.env.AccountKnown() || !h.env.RegionKnown() {
			// An environment-agnostic stack deploys where the deploy's credentials point.
			bootstrapCmd = "Run `cdk bootstrap` with the credentials and region the deploy uses before merging"
		}
		if b, ok := base[k]; !ok && in.Base != nil {
			c.Status, c.Finding, c.Action = Warn, fmt.Sprintf("a new environment: needs bootstrap version ≥ %d", h.version),
				bootstrapCmd+" if it is not bootstrapped yet"
		} else if ok && h.version > b.version {
			c.Status = Warn
			c.Finding = fmt.Sprintf("required bootstrap version rises from %d to %d", b.version, h.version)
			c.Action = bootstrapCmd
		}
		if in.Deployed != nil && h.env.AccountKnown() && h.env.RegionKnown() {
			deployed, ok, err := in.Deployed.DeployedBootstrapVersion(h.env, h.parameter)
			switch {
			case err != nil:
				c.Status, c.Finding = Warn, c.Finding+fmt.Sprintf("; the deployed version could not be read: %v", err)
			case !ok:
				c.Status, c.Finding, c.Action = Fail, c.Finding+"; the environment is not bootstrapped", bootstrapCmd
			case deployed < h.version:
				c.Status, c.Finding, c.Action = Fail, c.Finding+fmt.Sprintf("; version %d is deployed", deployed), bootstrapCmd
			default:
				c.Finding += fmt.Sprintf("; version %d is deployed", deployed)
			}
		}
		out = append(out, c)
	}
	return out
}

// modeCheck places the change in the matrix: moving from legacy to modern synthesis needs the
// new bootstrap stack everywhere before the merge (the row cdkbot decides as a failure at deploy).
func modeCheck(in AssemblyInput) Check {
	c := Check{Name: "mode", Status: Pass}
	head := in.Head.Mode()
	if in.Base == nil {
		c.Finding = fmt.Sprintf("deployment mode %s", head)
		return c
	}
	base := in.Base.Mode()
	switch {
	case base == assembly.ModeLegacy && head == assembly.ModeModern:
		row := Lookup(Combination{CLI: New, Framework: New, Bootstrap: Old, App: New})
		c.Status = Warn
		c.Finding = "the app moves from legacy (1.0) to modern (2.0) synthesis: " + row.Finding
		c.Action = row.Action
	case base == assembly.ModeModern && head == assembly.ModeLegacy:
		c.Status, c.Finding = Warn, "the app moves back from modern (2.0) to legacy (1.0) synthesis: "+
			"assets go back to stack parameters and the CDKToolkit bucket"
		c.Action = "Make sure every environment still has the CDKToolkit stack's asset bucket"
	case head == assembly.ModeMixed:
		c.Status, c.Finding = Warn, "stacks use both legacy and modern synthesis"
	default:
		c.Finding = fmt.Sprintf("deployment mode %s (unchanged)", head)
	}
	return c
}

func frameworkCheck(in AssemblyInput) Check {
	c := Check{Name: "framework", Status: Pass}
	head := in.Head.Framework()
	if in.Base == nil {
		c.Finding = fmt.Sprintf("%s, schema %s", orUnknown(head), in.Head.Version)
		return c
	}
	base := in.Base.Framework()
	if base == head {
		c.Finding = fmt.Sprintf("%s (unchanged), schema %s", orUnknown(head), in.Head.Version)
		return c
	}
	schemas := fmt.Sprintf("schema %s → %s", in.Base.Version, in.Head.Version)
	bv, err1 := semver.Parse(base.Version)
	hv, err2 := semver.Parse(head.Version)
	if base.Name != head.Name || err1 != nil || err2 != nil {
		c.Status = Warn
		c.Finding = fmt.Sprintf("framework changes from %s to %s; %s", orUnknown(base), orUnknown(head), schemas)
		if base.Name == "@aws-cdk/core" && head.Name == "aws-cdk-lib" {
			c.Action = "A CDK v1 → v2 migration: review the diff for replaced resources " +
				"and bootstrap every environment with the v2 template"
		}
		return c
	}
	bump, forward := semver.BumpBetween(bv, hv)
	if !forward {
		c.Status, c.Finding = Warn, fmt.Sprintf("%s is downgraded from %s to %s; %s", head.Name, bv, hv, schemas)
		return c
	}
	c.Finding = fmt.Sprintf("%s %s → %s (%s); %s", head.Name, bv, hv, bump, schemas)
	if bump == semver.Major {
		c.Status, c.Action = Warn, "A major framework upgrade: read its migration notes"
	}
	return c
}

func orUnknown(f assembly.Framework) string {
	if f.Name == "" {
		return "an unknown framework"
	}
	return f.String()
}

// effectiveFlags maps each flag to its effective value: the user's value when set, else what
// an unconfigured flag behaves like in this major version.
func effectiveFlags(a *assembly.Assembly, context map[string]any) map[string]any {
	out := map[string]any{}
	if a != nil {
		for _, r := range a.FeatureFlags {
			for _, f := range r.Flags {
				v := f.UserValue
				if v == nil {
					if m, ok := f.UnconfiguredBehavesLike.(map[string]any); ok {
						v = m["v2"]
					}
				}
				out[f.Name] = v
			}
		}
	}
	for k, v := range context {
		if strings.HasPrefix(k, "@aws-cdk") {
			out[k] = v
		}
	}
	return out
}

func featureFlagChecks(in AssemblyInput) []Check {
	if in.Base == nil {
		return nil
	}
	base, head := effectiveFlags(in.Base, nil), effectiveFlags(in.Head, in.Repo.Context)
	var changed []string
	for k, hv := range head {
		if bv, ok := base[k]; ok && !reflect.DeepEqual(bv, hv) {
			changed = append(changed, fmt.Sprintf("%s: %s → %s", k, jsonString(bv), jsonString(hv)))
		}
	}
	sort.Strings(changed)
	if len(changed) == 0 {
		return []Check{{Name: "feature flags", Status: Pass, Finding: "no feature flag changes its effective value"}}
	}
	return []Check{{Name: "feature flags", Status: Warn,
		Finding: fmt.Sprintf("%d feature flag(s) change their effective value: %s",
			len(changed), strings.Join(changed, "; ")),
		Action: "Feature flags change synthesized output: review the template diff of every stack"}}
}

func jsonString(v any) string {
	if v == nil {
		return "unset"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// schemaCheck names the cloud assembly schema changes between base and head when both schema
// versions are embedded. It is information: whether a CLI can read head is the "cli" check.
func schemaCheck(in AssemblyInput) Check {
	c := Check{Name: "schema", Status: Pass}
	if in.Base == nil || in.Base.Version == in.Head.Version {
		c.Finding = "schema " + in.Head.Version + " (unchanged)"
		return c
	}
	bs, ok1 := KnownSchema(in.Base.Version)
	hs, ok2 := KnownSchema(in.Head.Version)
	if !ok1 || !ok2 {
		c.Finding = fmt.Sprintf("schema %s → %s (the changes between them are not in cdkbot's schema history)",
			in.Base.Version, in.Head.Version)
		return c
	}
	old, err1 := bs.Load()
	new, err2 := hs.Load()
	if err1 != nil || err2 != nil {
		c.Status, c.Finding = Warn, "cannot read the embedded schema history"
		return c
	}
	changes, err := CompareSchemas(old, new)
	if err != nil {
		c.Status, c.Finding = Warn, err.Error()
		return c
	}
	counts := map[semver.Bump]int{}
	for _, ch := range changes {
		counts[ch.Bump]++
	}
	c.Finding = fmt.Sprintf("schema %s → %s: %d changes (%d major, %d minor, %d patch), "+
		"requiring a %s bump for readers of old assemblies",
		in.Base.Version, in.Head.Version, len(changes),
		counts[semver.Major], counts[semver.Minor], counts[semver.Patch], RequiredBump(changes))
	return c
}
