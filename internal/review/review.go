// Package review is the use case behind every PR comment and local review: from the base and
// head assemblies of a change, apply the policy aspects, diff every stack, check compatibility,
// evaluate the gates the team configured, and return one Report that views render.
package review

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/aspects"
	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/findings"
	"github.com/cdkbot/cdkbot/internal/resourcespec"
	"github.com/cdkbot/cdkbot/internal/stackstate"
)

// Gate names users put in fail-on.
const (
	GateReplace            = "replace"
	GateDestroy            = "destroy"
	GateOrphan             = "orphan"
	GateDestroyStateful    = "destroy-stateful"
	GateSecurityBroadening = "security-broadening"
	GateCompatFail         = "compat-fail"
	GatePolicyError        = "policy-error"
	// GateIncomplete: the head assembly has unresolved context lookups or error annotations, so
	// it cannot deploy (the CDK CLI refuses it too). No approval overrides it.
	GateIncomplete = "incomplete"
	// GateExportInUse: the change alters or removes an export that deployed stacks import, which
	// CloudFormation refuses. No approval overrides it.
	GateExportInUse = "export-in-use"
	// GateReplaceNamed: the change replaces a resource whose name property (TableName, ...) is set
	// and kept, which CloudFormation refuses. No approval overrides it.
	GateReplaceNamed = "replace-named"
	// GateDrift: a stack the change touches has resources changed or deleted outside
	// CloudFormation (drift detection, with credentials): the deploy would overwrite or fail on them.
	GateDrift = "drift"
	// GateValidationError: the head's validation report (aws-cdk-lib's template validation and
	// the app's validation plugins) has errors the base did not have, or a plugin failed to run.
	GateValidationError = "validation-error"
)

// AllGates lists every gate in the order reports show them.
var AllGates = []string{
	GateIncomplete, GateExportInUse, GateReplaceNamed, GateDestroyStateful, GateReplace, GateDestroy, GateOrphan,
	GateSecurityBroadening, GateCompatFail, GatePolicyError, GateValidationError, GateDrift,
}

// DefaultFailOn fails on what cannot deploy, on losing stateful resources and on permissions
// broadened at high severity or worse (SecurityMinimum); teams opt into the rest.
var DefaultFailOn = []string{GateIncomplete, GateExportInUse, GateReplaceNamed, GateDestroyStateful,
	GateSecurityBroadening}

// DefaultOverrideLabel is the PR label that turns failing gates into warnings.
const DefaultOverrideLabel = "cdkbot/approve-destructive"

// Input is what a review needs. Base may be nil (nothing deployed yet).
type Input struct {
	Base, Head    *assembly.Assembly
	Policy        *aspects.Config // nil: no policy
	Repo          compat.RepoFacts
	ToolSchemaMax int
	FailOn        []string   // gate names; nil means DefaultFailOn
	OverrideLabel string     // "" means DefaultOverrideLabel
	Approvals     []Approval // who approved going ahead despite failing gates
	Key           string     // identifies the comment (workflow, job, directory)
	HeadSHA       string     // the pull request's head commit, when known
	BaseSHA       string     // the commit the change is compared with, when known
	// MergeSHA is the commit whose templates were reviewed when it is not HeadSHA (GitHub's test merge commit).
	MergeSHA string
	Notes    []string // things the reviewer must know about how the review was made
	// HeadGiven is true when the head assembly was handed to cdkbot (an input, a flag) instead
	// of synthesized by it from the revision: the review says so, and so does its marker.
	HeadGiven bool
	// SecurityMinimum is the least severity that triggers security-broadening ("" is high).
	SecurityMinimum string
	// BaseUnavailable says why the base could not be read (it failed to synthesize): the review
	// shows the head alone and fails, since nobody can tell what the change destroys.
	BaseUnavailable string
	Keep            func(*assembly.Stack) bool // selects stacks; nil reviews all
	Spec            *resourcespec.Spec
	// Deployed is what CloudFormation runs, by qualified stack id, when cdkbot could read it
	// (credentials given): the review then says where that is not the base.
	Deployed map[string]*stackstate.Stack
	// Drift is what drift detection found in the deployed stacks the change touches, by
	// qualified stack id (nil when it was not run).
	Drift map[string][]stackstate.Drifted
	// Verdicts is CloudFormation's replacement verdict (True, Conditional, False) per stack and
	// logical id, from change sets created for the head and never executed: where it differs
	// from the specification's, CloudFormation's wins and the review says so.
	Verdicts map[string]map[string]string
	// ShowAssetChanges lists the resources whose only change is an asset's hash (new Lambda code,
	// new files to deploy) one by one; by default views fold them into a count per stack.
	ShowAssetChanges bool
}

// Approval is someone's permission to go ahead although gates fail: the override label applied
// by a maintainer, an approving review, or the label given on the command line.
type Approval struct {
	By  string `json:"by,omitempty"` // login; "" when given locally (cdkbot review --label)
	Via string `json:"via"`          // how: "label cdkbot/approve-destructive", "approving review"
	// At is when the approval was given (a label's application, RFC 3339), when known: with By
	// and Via it tells one application of a label from a later one.
	At string `json:"at,omitempty"`
	// Covers are the gate items (ItemDigest) the approver saw when approving; nil covers every
	// item (an approving review of the head commit, the label on the command line). A later
	// change whose gate items are not all covered is not approved.
	Covers []string `json:"covers,omitempty"`
}

// String reads as the approval does in logs and tests: who and how, then when and what it covers
// when those are known.
func (a Approval) String() string {
	s := "{" + a.By + " " + a.Via
	if a.At != "" {
		s += " at " + a.At
	}
	if a.Covers != nil {
		s += fmt.Sprintf(" covering %v", a.Covers)
	}
	return s + "}"
}

// covers says whether the approval covers the gate item with digest d, among the items whose
// set token (ShownToken) is set.
func (a Approval) covers(d, set string) bool {
	return a.Covers == nil || slices.Contains(a.Covers, d) || slices.Contains(a.Covers, set)
}

// ItemDigest names one gate item (what triggered the gate) for approvals to cover: the gate and
// the item's text, which names the stack and the resource or permission. 64 bits: the text comes
// from the pull request, so finding a new item under an approved item's digest must stay out of
// reach.
func ItemDigest(gate, item string) string {
	s := sha256.Sum256([]byte(gate + "\x00" + item))
	return hex.EncodeToString(s[:8])
}

// maxListedItems is how many item digests a marker lists; past it the marker records the set's
// token alone, so its size stays bounded, and an approval then covers exactly that set.
const maxListedItems = 64

// ShownToken is what a marker records of the items a review showed (digests, sorted): the
// digests themselves, or past maxListedItems the token of the whole set ("set:…").
func ShownToken(digests []string) []string {
	if len(digests) <= maxListedItems {
		return digests
	}
	s := sha256.Sum256([]byte(strings.Join(digests, ",")))
	return []string{"set:" + hex.EncodeToString(s[:16])}
}

// Gate is the outcome of one gate.
type Gate struct {
	Name       string   `json:"name"`
	Triggered  bool     `json:"triggered"`  // the change does what the gate watches
	Enforced   bool     `json:"enforced"`   // the gate is in fail-on
	Overridden bool     `json:"overridden"` // a failing gate turned into a warning by an approval
	Items      []string `json:"items"`      // what triggered it
	// Uncovered are the items no approval covers although someone approved: what changed since
	// the approval, which must be approved again.
	Uncovered []string `json:"uncovered,omitempty"`
}

// Shown are the digests (ItemDigest) of the items of the triggered, enforced gates: what the
// review asks an approver to approve, recorded in its marker so that an approval given after
// reading it covers exactly these.
func (r *Report) Shown() []string {
	var out []string
	for _, g := range r.Gates {
		if g.Triggered && g.Enforced {
			for _, it := range g.Items {
				out = append(out, ItemDigest(g.Name, it))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Failing is true for a triggered, enforced, not overridden gate.
func (g Gate) Failing() bool { return g.Triggered && g.Enforced && !g.Overridden }

// Report is the review of one change.
type Report struct {
	Key           string               `json:"key"`
	HeadSHA       string               `json:"headSha,omitempty"`
	BaseSHA       string               `json:"baseSha,omitempty"`
	MergeSHA      string               `json:"mergeSha,omitempty"`
	Approvals     []Approval           `json:"approvals,omitempty"`
	Stacks        []*cfndiff.StackDiff `json:"-"`
	Compatibility []compat.Check       `json:"compatibility"`
	Policy        *aspects.Report      `json:"policy,omitempty"`
	Gates         []Gate               `json:"gates"`
	OverrideLabel string               `json:"overrideLabel"`
	TemplateHash  map[string]string    `json:"templateHashes"` // sha256 of each head template as deployed
	// Identity is each head stack's deploy identity (Identities): what the marker records and
	// the merge deploy compares with, by qualified id.
	Identity map[string]Identity `json:"-"`
	// BaseDigest is the TemplateDigest of each base stack's template as it deploys, by qualified
	// id: what the review compared the head with (nil when it could not tell).
	BaseDigest map[string]string `json:"-"`
	// Mutated are the head templates the policy's aspects changed, as they deploy, by qualified
	// stack id (the others deploy as synthesized).
	Mutated map[string][]byte `json:"-"`
	Notes   []string          `json:"notes,omitempty"`
	// HeadGiven: the head assembly was given, not synthesized by cdkbot (Input.HeadGiven).
	HeadGiven bool `json:"headGiven,omitempty"`
	// BaseUnavailable fails the review whatever the gates say (fail closed).
	BaseUnavailable string `json:"baseUnavailable,omitempty"`
	// Deployed compares what runs with the base, per stack read (empty without credentials).
	Deployed []Deployed `json:"deployed,omitempty"`
	// Drift lists the drifted resources of the stacks the change touches, when detection ran.
	Drift []StackDrift `json:"drift,omitempty"`
	// Findings are what the app reported while it synthesized (validation report, warning and
	// info annotations), compared with the base's.
	Findings *findings.Report `json:"findings,omitempty"`
	// Moves are resources most likely moved (a renamed construct, a construct moved between
	// stacks), not destroyed and created.
	Moves []Move `json:"moves,omitempty"`
	// ShowAssetChanges: views list asset-hash-only changes instead of counting them (Input's).
	ShowAssetChanges bool `json:"-"`
}

// Failed is true when a gate fails, or the base could not be read: the check run's conclusion.
func (r *Report) Failed() bool {
	if r.BaseUnavailable != "" {
		return true
	}
	for _, g := range r.Gates {
		if g.Failing() {
			return true
		}
	}
	return false
}

// Run reviews a change.
func Run(in Input) (*Report, error) {
	spec := in.Spec
	if spec == nil {
		spec = resourcespec.Default()
	}
	rep := &Report{Key: in.Key, HeadSHA: in.HeadSHA, BaseSHA: in.BaseSHA, MergeSHA: in.MergeSHA,
		OverrideLabel: in.OverrideLabel, Approvals: in.Approvals, TemplateHash: map[string]string{},
		Notes: in.Notes, BaseUnavailable: in.BaseUnavailable, HeadGiven: in.HeadGiven,
		ShowAssetChanges: in.ShowAssetChanges}
	if rep.OverrideLabel == "" {
		rep.OverrideLabel = DefaultOverrideLabel
	}
	// Templates are let go stack by stack once diffed but for the stacks compared with what
	// runs, which read the base's again (compareDeployed).
	opts := cfndiff.Options{Spec: spec, ReleaseTemplates: true,
		KeepTemplates: func(id string) bool { return in.Deployed[id] != nil }}
	if in.Policy != nil && len(in.Policy.Aspects) > 0 {
		// The same aspects shape both sides, so the diff shows what the change does, not what
		// the policy adds to every stack; the head's report is the one that gates.
		var err error
		var before *aspects.Report
		if in.Base != nil {
			if opts.OldTemplates, before, err = applyPolicy(in.Base, in.Policy, spec); err != nil {
				return nil, fmt.Errorf("policy on base: %w", err)
			}
		}
		if opts.NewTemplates, rep.Policy, err = applyPolicy(in.Head, in.Policy, spec); err != nil {
			return nil, fmt.Errorf("policy on head: %w", err)
		}
		markExisting(rep.Policy, before)
	}
	stacks, err := cfndiff.DiffAssemblies(in.Base, in.Head, in.Keep, opts)
	if err != nil {
		return nil, err
	}
	rep.Stacks = stacks
	rep.Moves = Moves(stacks)
	rep.Findings = findings.Review(in.Base, in.Head, in.Keep)
	applyVerdicts(stacks, in.Verdicts)
	rep.Deployed = compareDeployed(in, stacks, opts)
	rep.Drift = stackDrifts(in.Drift)
	rep.Mutated = mutatedBytes(opts.NewTemplates)
	// Each head template's bytes as they deploy, read once for the hashes, the identities and the
	// nested-stack check.
	heads, err := DeployTemplates(in.Head, rep.Mutated)
	if err != nil {
		return nil, err
	}
	if rep.TemplateHash, err = HashTemplates(in.Head, heads); err != nil {
		return nil, err
	}
	if rep.Identity, err = Identities(in.Head, heads); err != nil {
		return nil, err
	}
	if in.Base != nil || in.BaseUnavailable == "" {
		// What the review compared with, stack by stack: the merge deploy refuses a stack that
		// runs something else, since the change it makes there is not the one shown.
		rep.BaseDigest = map[string]string{}
		if in.Base != nil {
			bases, err := DeployTemplates(in.Base, mutatedBytes(opts.OldTemplates))
			if err != nil {
				return nil, err
			}
			for id, b := range bases {
				rep.BaseDigest[id] = TemplateDigest(b)
			}
		}
		for id, ident := range rep.Identity {
			ident.Base = NoBase
			if d, ok := rep.BaseDigest[id]; ok {
				ident.Base = d
			}
			rep.Identity[id] = ident
		}
	}
	rep.Compatibility = compat.CheckAssemblies(compat.AssemblyInput{Base: in.Base, Head: in.Head,
		Repo: in.Repo, ToolSchemaMax: in.ToolSchemaMax})
	minimum, err := cfndiff.ParseSeverity(in.SecurityMinimum)
	if err != nil {
		return nil, err
	}
	rep.Gates = gates(rep, spec, in, minimum, heads)
	return rep, nil
}

// markExisting marks the head's violations the base already had (same rule, stack, construct
// and message): they are shown but are not the change's doing.
func markExisting(head, base *aspects.Report) {
	if head == nil || base == nil {
		return
	}
	seen := map[[4]string]bool{}
	for _, v := range base.Violations {
		seen[[4]string{v.Rule, v.Stack, v.Path, v.Message}] = true
	}
	for i, v := range head.Violations {
		head.Violations[i].Existing = seen[[4]string{v.Rule, v.Stack, v.Path, v.Message}]
	}
}

func applyPolicy(
	a *assembly.Assembly, cfg *aspects.Config, spec *resourcespec.Spec,
) (map[string]*cfn.Object, *aspects.Report, error) {
	app, err := aspects.Build(a)
	if err != nil {
		return nil, nil, err
	}
	rep, err := aspects.Run(app, cfg, spec)
	if err != nil {
		return nil, nil, err
	}
	return app.ChangedTemplates(), rep, nil
}

func gates(rep *Report, spec *resourcespec.Spec, in Input, minimum cfndiff.Severity, heads map[string][]byte) []Gate {
	failOn := in.FailOn
	if failOn == nil {
		failOn = DefaultFailOn
	}
	enforced := map[string]bool{}
	for _, g := range failOn {
		enforced[g] = true
	}
	overridden := len(in.Approvals) > 0
	items := map[string][]string{}
	for _, top := range rep.Stacks {
		for _, s := range top.All() {
			where := " in " + s.ID
			for _, r := range s.Diff.Resources {
				if r.MetadataOnly() {
					continue // changes nothing in AWS
				}
				what := fmt.Sprintf("%s (%s)%s", r.LogicalID, r.Type(), where)
				switch r.Impact {
				case cfndiff.Replace, cfndiff.MayReplace:
					items[GateReplace] = append(items[GateReplace], what)
				case cfndiff.Destroy:
					items[GateDestroy] = append(items[GateDestroy], what)
				case cfndiff.Orphan:
					items[GateOrphan] = append(items[GateOrphan], what)
				}
				if r.RefusedName != "" {
					items[GateReplaceNamed] = append(items[GateReplaceNamed], what+" keeps its "+r.RefusedName)
				}
				if t := spec.Type(r.OldType); t != nil && t.Stateful && losesData(r) {
					items[GateDestroyStateful] = append(items[GateDestroyStateful], fmt.Sprintf("%s: %s", what, r.Consequence()))
				}
			}
			for _, e := range s.ExportsInUse {
				// What the export's items share (CloudFormation refuses; deploy in two steps) is
				// the gate's to say, once: each item names the export, why and who imports it.
				items[GateExportInUse] = append(items[GateExportInUse], fmt.Sprintf("%s: export %s (%s) is imported by %s",
					s.ID, e.Name, e.Why, strings.Join(e.Importers, ", ")))
			}
			for _, f := range s.Diff.Security.Findings() {
				if f.Severity >= minimum {
					items[GateSecurityBroadening] = append(items[GateSecurityBroadening],
						fmt.Sprintf("%s: %s (%s)", s.ID, f.What, f.Level))
				}
			}
		}
	}
	for _, sd := range rep.Drift {
		for _, r := range sd.Resources {
			items[GateDrift] = append(items[GateDrift], fmt.Sprintf("%s in %s: %s", r.LogicalID, sd.Stack, r.Summary()))
		}
	}
	for _, c := range rep.Compatibility {
		if c.Status == compat.Fail {
			items[GateCompatFail] = append(items[GateCompatFail], c.Name+": "+c.Finding)
		}
	}
	seen := map[string]bool{}
	for _, st := range in.Head.AllStacks() {
		if in.Keep != nil && !in.Keep(st) {
			continue
		}
		whys := in.Head.Incomplete(st)
		whys = append(whys, nestedTemplateProblems(in.Head, st, heads[st.QualifiedID()])...)
		for _, why := range whys {
			if !seen[why] {
				seen[why] = true
				items[GateIncomplete] = append(items[GateIncomplete], why)
			}
		}
	}
	if rep.Policy != nil {
		for _, v := range rep.Policy.Violations {
			if v.Severity == "error" && !v.Suppressed && !v.Existing {
				items[GatePolicyError] = append(items[GatePolicyError], fmt.Sprintf("%s on %s: %s", v.Rule, v.Path, v.Message))
			}
		}
	}
	items[GateValidationError] = findings.GateItems(rep.Findings)
	var shown []string
	for _, name := range AllGates {
		if enforced[name] {
			for _, it := range items[name] {
				shown = append(shown, ItemDigest(name, it))
			}
		}
	}
	slices.Sort(shown)
	shown = slices.Compact(shown)
	set := "" // listed one by one, an item is covered by its digest; past the list, by the set's token
	if len(shown) > maxListedItems {
		set = ShownToken(shown)[0]
	}
	var out []Gate
	for _, name := range AllGates {
		g := Gate{Name: name, Triggered: len(items[name]) > 0, Enforced: enforced[name], Items: items[name]}
		sort.Strings(g.Items)
		if g.Items == nil {
			g.Items = []string{}
		}
		if g.Triggered && g.Enforced && overridden && Approvable(name) {
			for _, it := range g.Items {
				d := ItemDigest(name, it)
				if !slices.ContainsFunc(in.Approvals, func(a Approval) bool { return a.covers(d, set) }) {
					g.Uncovered = append(g.Uncovered, it)
				}
			}
			g.Overridden = len(g.Uncovered) == 0
		}
		out = append(out, g)
	}
	return out
}

// unapprovable gates are what CloudFormation refuses, which no approval changes.
var unapprovable = map[string]bool{GateIncomplete: true, GateExportInUse: true, GateReplaceNamed: true}

// Approvable says whether an approval can turn the failing gate into a warning: not for what
// CloudFormation (or the CDK CLI) refuses to deploy.
func Approvable(gate string) bool { return !unapprovable[gate] }

// losesData is true when the change replaces or destroys the resource: even when the old one is
// retained, the app moves to a new, empty one.
func losesData(r *cfndiff.ResourceChange) bool {
	switch r.Impact {
	case cfndiff.Destroy, cfndiff.Replace, cfndiff.MayReplace:
		return true
	}
	return false
}

// ValidateGates checks gate names from the user.
func ValidateGates(names []string) error {
	known := map[string]bool{}
	for _, g := range AllGates {
		known[g] = true
	}
	for _, n := range names {
		if !known[n] {
			return fmt.Errorf("unknown gate %q; gates: %s", n, strings.Join(AllGates, ", "))
		}
	}
	return nil
}

// MutatedTemplates are the templates the policy's aspects change, by qualified stack id, as the
// bytes that deploy: the review diffs and hashes exactly these, and deploy deploys them instead
// of the synthesized files. Read-only aspects change nothing (an empty map).
func MutatedTemplates(
	a *assembly.Assembly, policy *aspects.Config, spec *resourcespec.Spec,
) (map[string][]byte, error) {
	if policy == nil || len(policy.Aspects) == 0 {
		return map[string][]byte{}, nil
	}
	if spec == nil {
		spec = resourcespec.Default()
	}
	changed, _, err := applyPolicy(a, policy, spec)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return mutatedBytes(changed), nil
}

func mutatedBytes(changed map[string]*cfn.Object) map[string][]byte {
	out := map[string][]byte{}
	for id, t := range changed {
		out[id] = []byte(cfn.JSON(t))
	}
	return out
}

// HashTemplates are the sha256 of the template each stack deploys, by qualified id, with the
// templates the policy mutated (MutatedTemplates) in place of the assembly's own.
func HashTemplates(a *assembly.Assembly, mutated map[string][]byte) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range a.AllStacks() {
		body, ok := mutated[s.QualifiedID()]
		if !ok {
			var err error
			if body, err = s.TemplateBytes(); err != nil {
				return nil, err
			}
		}
		sum := sha256.Sum256(body)
		out[s.QualifiedID()] = hex.EncodeToString(sum[:])
	}
	return out, nil
}
