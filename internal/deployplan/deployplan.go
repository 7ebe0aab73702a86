// Package deployplan turns an assembly into the deployments a merge performs: for every
// selected stack its resolved environment and roles, the bootstrap version it needs, how its
// template reaches CloudFormation, its parameters, and the stacks and asset manifests it must
// wait for, in an order that respects them. It is pure: the deploy adapter executes the plan.
package deployplan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

// MaxInlineTemplate is CloudFormation's limit on a TemplateBody, in bytes.
const MaxInlineTemplate = 51200

// Template says how a stack's template reaches CloudFormation: exactly one of URL (the object
// the publish step put in the asset bucket, or UploadBucket/UploadKey) or Inline is used.
type Template struct {
	Path   string `json:"path"` // root-relative file in the assembly
	Size   int64  `json:"size"`
	Inline bool   `json:"inline,omitempty"`
	URL    string `json:"url,omitempty"` // https URL of the template object
	// UploadBucket/UploadKey: a legacy stack's template too large to inline, uploaded to the
	// toolkit bucket first (as the CDK CLI does), then passed by URL.
	UploadBucket string `json:"uploadBucket,omitempty"`
	UploadKey    string `json:"uploadKey,omitempty"`
	// Body, when set, is what deploys instead of the file at Path: the template as the
	// policy's aspects mutated it (what the review diffed and hashed).
	Body []byte `json:"-"`
	// Mutated says the policy changed the template (Body is set).
	Mutated bool `json:"mutated,omitempty"`
}

// Bootstrap is the environment's bootstrap version a stack needs.
type Bootstrap struct {
	Parameter  string `json:"parameter"` // SSM parameter holding the deployed version
	MinVersion int    `json:"minVersion"`
}

// Stack is the deployment of one stack.
type Stack struct {
	ID                    string               `json:"id"` // qualified artifact id
	StackName             string               `json:"stackName"`
	DisplayName           string               `json:"displayName"`
	Environment           assembly.Environment `json:"-"`
	Env                   string               `json:"environment"`
	AssumeRoleARN         string               `json:"assumeRoleArn,omitempty"`
	AssumeRoleExternalID  string               `json:"assumeRoleExternalId,omitempty"`
	ExecutionRoleARN      string               `json:"executionRoleArn,omitempty"`
	Bootstrap             *Bootstrap           `json:"bootstrap,omitempty"`
	Template              Template             `json:"template"`
	Parameters            map[string]string    `json:"parameters,omitempty"`
	Tags                  map[string]string    `json:"tags,omitempty"`
	NotificationARNs      []string             `json:"notificationArns,omitempty"`
	TerminationProtection bool                 `json:"terminationProtection,omitempty"`
	ChangeSetName         string               `json:"changeSetName"`
	// DependsOn are the stacks (qualified ids) deployed before this one; Assets the asset
	// manifests (qualified ids) published before it.
	DependsOn []string `json:"dependsOn,omitempty"`
	Assets    []string `json:"assets,omitempty"`
	// Wave is the configured wave (0 first); Level the depth in the dependency graph. Stacks
	// of one wave and level can deploy in parallel.
	Wave  int `json:"wave"`
	Level int `json:"level"`
	// Running, when set, is what the stack must run before this deploy for it to make the
	// change its review showed: the review's base template's digest (review.TemplateDigest), or
	// Absent when the review saw no such stack. The deployer refuses the stack otherwise.
	Running *Expectation `json:"-"`
}

// Expectation is what a stack must run before it is deployed.
type Expectation struct {
	Digest string // review.TemplateDigest of the template it runs; "" with Absent
	Absent bool   // it must not exist yet
}

// Plan is the deployments of an assembly in a valid order (waves, then dependencies, then id).
type Plan struct {
	Stacks []Stack `json:"stacks"`
}

// Options tune planning.
type Options struct {
	// Unknown environments resolve to these, as the deploying credentials would.
	DefaultAccount, DefaultRegion string
	// Stacks selects stacks by glob (qualified id, display name or stack name); empty selects
	// all. Exclude removes matches after selection.
	Stacks, Exclude []string
	// NoDeps deploys exactly the selection; otherwise the stacks it depends on are added.
	NoDeps bool
	// Waves are globs: stacks matching the first deploy before everything else (the
	// "mutation" wave of continuous delivery), then the second's, and so on; the rest last.
	Waves []string
	// Parameters are template parameters per stack (qualified id), e.g. legacy asset
	// parameters from the publish plan; they override the manifest's.
	Parameters map[string]map[string]string
	// ToolkitBucket stores legacy templates too large to inline.
	ToolkitBucket string
	// Revision names the change sets (a commit sha); empty gives "cdkbot-deploy".
	Revision string
	// Templates are the policy-mutated templates by qualified stack id (review.MutatedTemplates):
	// they deploy instead of the synthesized files.
	Templates map[string][]byte
	// Running are what each stack must run before it deploys, by qualified id (Stack.Running);
	// a stack without one has no expectation.
	Running map[string]Expectation
	// Pinned are the exact bytes to deploy for each stack by qualified id, as a caller compared
	// them with a review (review.DeployTemplates): what deploys is those bytes, delivered inline
	// or uploaded under their own hash, never the file read again nor an object the assembly
	// names (stackTemplateAssetObjectUrl's key).
	Pinned map[string][]byte
}

// IncompleteError refuses stacks the CDK CLI would not deploy either: unresolved context lookups
// or error annotations. Nothing deploys.
type IncompleteError struct{ Reasons []string }

func (e *IncompleteError) Error() string {
	return "nothing deployed: the assembly is incomplete (the CDK CLI refuses it too): " + strings.Join(e.Reasons, "; ")
}

// Build plans the deployment of an assembly.
func Build(a *assembly.Assembly, o Options) (*Plan, error) {
	for _, g := range append(append(append([]string{}, o.Stacks...), o.Exclude...), o.Waves...) {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("%q is not a valid glob: %v", g, err)
		}
	}
	all := map[string]*assembly.Stack{}
	for _, s := range a.AllStacks() {
		all[s.QualifiedID()] = s
	}
	chosen, err := selectStacks(a, all, o)
	if err != nil {
		return nil, err
	}
	var reasons []string
	for _, id := range chosen {
		for _, why := range a.Incomplete(all[id]) {
			if !slices.Contains(reasons, why) {
				reasons = append(reasons, why)
			}
		}
	}
	if len(reasons) > 0 {
		return nil, &IncompleteError{Reasons: reasons}
	}
	p := &Plan{}
	byID := map[string]*Stack{}
	inPlan := map[string]bool{}
	for _, id := range chosen {
		inPlan[id] = true
	}
	for _, id := range chosen {
		st, err := plan(a, all[id], all, inPlan, o)
		if err != nil {
			return nil, err
		}
		p.Stacks = append(p.Stacks, st)
	}
	for i := range p.Stacks {
		byID[p.Stacks[i].ID] = &p.Stacks[i]
		p.Stacks[i].Wave = len(o.Waves)
		for w, g := range o.Waves {
			if all[p.Stacks[i].ID].Matches(g) {
				p.Stacks[i].Wave = w
				break
			}
		}
	}
	// A dependency deploys no later than the earliest wave that needs it.
	for changed := true; changed; {
		changed = false
		for _, st := range byID {
			for _, d := range st.DependsOn {
				if byID[d].Wave > st.Wave {
					byID[d].Wave, changed = st.Wave, true
				}
			}
		}
	}
	if err := order(p, byID); err != nil {
		return nil, err
	}
	return p, nil
}

// selectStacks returns the qualified ids to deploy, sorted.
// With no selection only the top-level stacks deploy, as `cdk deploy --all` does: the stacks of
// Stages (a CDK Pipelines app's environments) need their path ("Prod/*") or "**", so a pipeline's
// stages are never deployed around the pipeline by accident.
func selectStacks(a *assembly.Assembly, all map[string]*assembly.Stack, o Options) ([]string, error) {
	set := map[string]bool{}
	for _, g := range o.Stacks {
		found := false
		for id, s := range all {
			if g == "**" || s.Matches(g) {
				set[id], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("--stacks %q matches no stack (stacks: %s)",
				g, strings.Join(slices.Sorted(maps.Keys(all)), ", "))
		}
	}
	if len(o.Stacks) == 0 {
		var staged []string
		for id, s := range all {
			if s.NestedPath == "" {
				set[id] = true
			} else {
				staged = append(staged, id)
			}
		}
		if len(set) == 0 && len(staged) > 0 {
			sort.Strings(staged)
			return nil, fmt.Errorf("the assembly has no top-level stack; its %d stack(s) are in Stages (%s): "+
				"select them by path, e.g. --stacks '%s/*', or all with --stacks '**' (as `cdk deploy` does)",
				len(staged), strings.Join(staged, ", "), all[staged[0]].NestedPath)
		}
	}
	if !o.NoDeps {
		var add func(id string)
		add = func(id string) {
			for _, d := range stackDeps(all[id], all) {
				if !set[d] {
					set[d] = true
					add(d)
				}
			}
		}
		for id := range set {
			add(id)
		}
	}
	for id := range set {
		for _, g := range o.Exclude {
			if all[id].Matches(g) {
				delete(set, id)
			}
		}
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

// stackDeps are the stacks (qualified ids) a stack depends on, in its own assembly.
func stackDeps(s *assembly.Stack, all map[string]*assembly.Stack) []string {
	var out []string
	for _, d := range append(append([]string{}, s.Dependencies...), s.AdditionalDependencies...) {
		id := d
		if s.NestedPath != "" {
			id = s.NestedPath + "/" + d
		}
		if _, ok := all[id]; ok {
			out = append(out, id)
		}
	}
	return out
}

func plan(
	a *assembly.Assembly, s *assembly.Stack, all map[string]*assembly.Stack, inPlan map[string]bool, o Options,
) (Stack, error) {
	env := s.Environment
	if !env.AccountKnown() && o.DefaultAccount != "" {
		env.Account = o.DefaultAccount
	}
	if !env.RegionKnown() && o.DefaultRegion != "" {
		env.Region = o.DefaultRegion
	}
	st := Stack{
		ID: s.QualifiedID(), StackName: s.StackName, DisplayName: s.DisplayName, Environment: env, Env: env.String(),
		AssumeRoleARN:         assembly.ResolvePlaceholders(s.AssumeRoleARN, env),
		AssumeRoleExternalID:  s.AssumeRoleExternalID,
		ExecutionRoleARN:      assembly.ResolvePlaceholders(s.CloudFormationExecutionRoleARN, env),
		Tags:                  s.Tags,
		NotificationARNs:      s.NotificationARNs,
		TerminationProtection: s.TerminationProtection,
		ChangeSetName:         changeSetName(o.Revision),
	}
	if e, ok := o.Running[st.ID]; ok {
		st.Running = &e
	}
	if s.RequiresBootstrapStackVersion > 0 {
		param := s.BootstrapStackVersionSSMParameter
		if param == "" {
			param = "/cdk-bootstrap/hnb659fds/version"
		}
		st.Bootstrap = &Bootstrap{Parameter: param, MinVersion: s.RequiresBootstrapStackVersion}
	}
	st.Parameters = map[string]string{}
	for k, v := range s.Parameters {
		st.Parameters[k] = v
	}
	for k, v := range o.Parameters[st.ID] {
		st.Parameters[k] = v
	}
	if len(st.Parameters) == 0 {
		st.Parameters = nil
	}
	tpl, err := template(a, s, env, o)
	if err != nil {
		return Stack{}, err
	}
	st.Template = tpl
	for _, d := range stackDeps(s, all) {
		if inPlan[d] {
			st.DependsOn = append(st.DependsOn, d)
		}
	}
	for _, m := range a.AllAssetManifests() {
		for _, d := range s.Dependencies {
			if m.ArtifactID == d && m.NestedPath == s.NestedPath {
				st.Assets = append(st.Assets, m.QualifiedID())
			}
		}
	}
	sort.Strings(st.DependsOn)
	sort.Strings(st.Assets)
	return st, nil
}

// template decides how the template reaches CloudFormation.
func template(a *assembly.Assembly, s *assembly.Stack, env assembly.Environment, o Options) (Template, error) {
	t := Template{Path: s.TemplatePath, Size: s.TemplateSize}
	if body, ok := o.Templates[s.QualifiedID()]; ok {
		return mutatedTemplate(s, env, o, body, true)
	}
	if body, ok := o.Pinned[s.QualifiedID()]; ok {
		return mutatedTemplate(s, env, o, body, false)
	}
	if s.StackTemplateAssetObjectURL != "" {
		u, err := httpsURL(assembly.ResolvePlaceholders(s.StackTemplateAssetObjectURL, env), env)
		if err != nil {
			return Template{}, fmt.Errorf("stack %s: stackTemplateAssetObjectUrl: %w", s.QualifiedID(), err)
		}
		t.URL = u
		return t, nil
	}
	if s.TemplateSize <= MaxInlineTemplate {
		t.Inline = true
		return t, nil
	}
	if o.ToolkitBucket == "" {
		return Template{}, fmt.Errorf("stack %s: its template is %d bytes, over CloudFormation's %d-byte inline limit, "+
			"and it was synthesized without a published template: give the toolkit (staging) bucket to upload it to",
			s.QualifiedID(), s.TemplateSize, MaxInlineTemplate)
	}
	b, err := a.ReadFile(s.TemplatePath, assembly.MaxFileSize)
	if err != nil {
		return Template{}, fmt.Errorf("stack %s: %w", s.QualifiedID(), err)
	}
	sum := sha256.Sum256(b)
	// The CDK CLI's key for uploaded templates: cdk/<stack name>/<sha256>.yml.
	t.UploadBucket, t.UploadKey = o.ToolkitBucket, "cdk/"+s.StackName+"/"+hex.EncodeToString(sum[:])+".yml"
	u, err := httpsURL("s3://"+t.UploadBucket+"/"+t.UploadKey, env)
	if err != nil {
		return Template{}, err
	}
	t.URL = u
	return t, nil
}

// mutatedTemplate delivers given bytes (policy-mutated, or pinned by a caller): beside the
// synthesized template asset in the same bucket, under the bytes' own hash (content-addressed,
// like every CDK asset), or inline when it fits and the stack has no template asset, or in the
// toolkit bucket.
func mutatedTemplate(
	s *assembly.Stack, env assembly.Environment, o Options, body []byte, mutated bool,
) (Template, error) {
	t := Template{Path: s.TemplatePath, Size: int64(len(body)), Body: body, Mutated: mutated}
	digest := sha256.Sum256(body)
	sum := hex.EncodeToString(digest[:])
	switch {
	case s.StackTemplateAssetObjectURL != "":
		synthesized := assembly.ResolvePlaceholders(s.StackTemplateAssetObjectURL, env)
		bucket, _, ok := strings.Cut(strings.TrimPrefix(synthesized, "s3://"), "/")
		if !ok || !strings.HasPrefix(synthesized, "s3://") {
			return Template{}, fmt.Errorf("stack %s: stackTemplateAssetObjectUrl %q is not an s3:// URL",
				s.QualifiedID(), synthesized)
		}
		t.UploadBucket, t.UploadKey = bucket, sum+".json"
	case t.Size <= MaxInlineTemplate:
		t.Inline = true
		return t, nil
	case o.ToolkitBucket == "":
		return Template{}, fmt.Errorf("stack %s: its policy-mutated template is %d bytes, "+
			"over CloudFormation's %d-byte inline limit: give the toolkit (staging) bucket to upload it to",
			s.QualifiedID(), t.Size, MaxInlineTemplate)
	default:
		t.UploadBucket, t.UploadKey = o.ToolkitBucket, "cdk/"+s.StackName+"/"+sum+".yml"
	}
	u, err := httpsURL("s3://"+t.UploadBucket+"/"+t.UploadKey, env)
	if err != nil {
		return Template{}, err
	}
	t.URL = u
	return t, nil
}

// httpsURL turns s3://bucket/key into the regional virtual-path HTTPS URL CloudFormation reads.
func httpsURL(s3url string, env assembly.Environment) (string, error) {
	rest, ok := strings.CutPrefix(s3url, "s3://")
	bucket, key, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || bucket == "" || key == "" {
		return "", fmt.Errorf("%q is not an s3://bucket/key URL", s3url)
	}
	if strings.Contains(s3url, "${") || !env.RegionKnown() {
		return "", fmt.Errorf("%q needs the environment's account and region, which are unknown: "+
			"give the stack an env or configure a default", s3url)
	}
	suffix := "amazonaws.com"
	if env.Partition() == "aws-cn" {
		suffix = "amazonaws.com.cn"
	}
	return "https://s3." + env.Region + "." + suffix + "/" + bucket + "/" + key, nil
}

// changeSetName is deterministic per revision and valid for CloudFormation
// ([a-zA-Z][-a-zA-Z0-9]*, at most 128 characters).
func changeSetName(rev string) string {
	var b strings.Builder
	for _, r := range rev {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		}
	}
	clean := b.String()
	if clean == "" {
		return "cdkbot-deploy"
	}
	if len(clean) > 40 {
		clean = clean[:40]
	}
	return "cdkbot-" + clean
}

// order assigns levels and sorts the plan (wave, level, id) so every stack follows what it
// depends on.
func order(p *Plan, byID map[string]*Stack) error {
	level := map[string]int{}
	visiting := map[string]bool{}
	var depth func(id string) (int, error)
	depth = func(id string) (int, error) {
		if l, ok := level[id]; ok {
			return l, nil
		}
		if visiting[id] {
			return 0, fmt.Errorf("stack %s depends on itself through its dependencies", id)
		}
		visiting[id] = true
		l := 0
		for _, d := range byID[id].DependsOn {
			dl, err := depth(d)
			if err != nil {
				return 0, err
			}
			l = max(l, dl+1)
		}
		visiting[id] = false
		level[id] = l
		return l, nil
	}
	for id := range byID {
		if _, err := depth(id); err != nil {
			return err
		}
	}
	for i := range p.Stacks {
		p.Stacks[i].Level = level[p.Stacks[i].ID]
	}
	sort.SliceStable(p.Stacks, func(i, j int) bool {
		a, b := p.Stacks[i], p.Stacks[j]
		if a.Wave != b.Wave {
			return a.Wave < b.Wave
		}
		if a.Level != b.Level {
			return a.Level < b.Level
		}
		return a.ID < b.ID
	})
	return nil
}
