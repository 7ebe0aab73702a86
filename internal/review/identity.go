package review

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

// A pull request's own code writes its head assembly, so a review is only as honest as that
// code: an app can print one thing when reviewed and another when the merge deploys it. What
// holds is the deploy's comparison with what the review recorded, so the review records
// everything that decides what CloudFormation does with a stack, and the deploy refuses any
// difference.

// identityField is one part of a stack's deploy identity.
type identityField struct {
	code, name string // the marker's one-letter code; the name a refusal gives
}

// identityFields are the parts of a deploy identity, in the order a refusal names them.
var identityFields = []identityField{
	{"n", "stack name"}, {"e", "environment"}, {"t", "template"}, {"p", "parameters"}, {"g", "tags"},
	{"x", "termination protection"}, {"o", "notification ARNs"}, {"r", "roles"}, {"s", "assets"},
}

// fieldDigestLen is the length of a field's digest in the marker: enough to name what differs;
// the stack's whole digest (Identity.Digest) is what decides.
const fieldDigestLen = 8

// Identity is a stack's deploy identity: a digest of everything that decides what
// CloudFormation does with it — stack name, environment, the template as it deploys (policy
// applied), parameters, tags, termination protection, notification ARNs, the roles, and the
// content of every asset it publishes (nested templates and Lambda code among them) — and a
// short digest per field to say which one differs.
type Identity struct {
	Digest string            // 32 hex characters over every field
	Fields map[string]string // field name → short digest
	// Base is not part of the identity: it is what the review compared the stack with (the
	// base template's TemplateDigest, or NoBase when the base had no such stack; "" unknown).
	// The deploy refuses a stack that runs anything else: its change would not be the one shown.
	Base string
}

// NoBase is Identity.Base for a stack its review's base did not have.
const NoBase = "-"

// String encodes the identity for the review marker: "DIGEST n:xxxxxxxx e:… …".
func (id Identity) String() string {
	var b strings.Builder
	b.WriteString(id.Digest)
	for _, f := range identityFields {
		fmt.Fprintf(&b, " %s:%s", f.code, id.Fields[f.name])
	}
	if id.Base != "" {
		b.WriteString(" b:" + id.Base)
	}
	return b.String()
}

// ParseIdentity reads an identity the marker recorded.
func ParseIdentity(s string) (Identity, error) {
	parts := strings.Fields(s)
	if len(parts) == 0 || len(parts[0]) != 32 {
		return Identity{}, fmt.Errorf("not a deploy identity: %q", s)
	}
	id := Identity{Digest: parts[0], Fields: map[string]string{}}
	for _, p := range parts[1:] {
		code, digest, ok := strings.Cut(p, ":")
		if code == "b" && ok {
			id.Base = digest
			continue
		}
		i := slices.IndexFunc(identityFields, func(f identityField) bool { return f.code == code })
		if !ok || i < 0 {
			return Identity{}, fmt.Errorf("not a deploy identity: %q", s)
		}
		id.Fields[identityFields[i].name] = digest
	}
	return id, nil
}

// Differs names the fields in which deploying differs from reviewed, in order; when the whole
// digests differ but no field does (a marker cut short, a collision of short digests), it says
// "identity".
func (id Identity) Differs(deploying Identity) []string {
	if id.Digest == deploying.Digest {
		return nil
	}
	var out []string
	for _, f := range identityFields {
		if id.Fields[f.name] != deploying.Fields[f.name] {
			out = append(out, f.name)
		}
	}
	if len(out) == 0 {
		out = []string{"identity"}
	}
	return out
}

// Identities are the deploy identities of every stack of a, by qualified id, with mutated (the
// policy-mutated templates, MutatedTemplates) in place of the assembly's own.
func Identities(a *assembly.Assembly, mutated map[string][]byte) (map[string]Identity, error) {
	out := map[string]Identity{}
	manifests := map[string]*assembly.AssetManifest{}
	for _, m := range a.AllAssetManifests() {
		manifests[m.QualifiedID()] = m
	}
	digests := map[string]string{} // content digests by root-relative path: an asset shared by stacks is read once
	for _, s := range a.AllStacks() {
		id, err := identity(a, s, mutated, manifests, digests)
		if err != nil {
			return nil, fmt.Errorf("stack %s: %w", s.QualifiedID(), err)
		}
		out[s.QualifiedID()] = id
	}
	return out, nil
}

func identity(a *assembly.Assembly, s *assembly.Stack, mutated map[string][]byte,
	manifests map[string]*assembly.AssetManifest, digests map[string]string) (Identity, error) {
	body, ok := mutated[s.QualifiedID()]
	if !ok {
		var err error
		if body, err = s.TemplateBytes(); err != nil {
			return Identity{}, err
		}
	}
	assets, err := stackAssets(a, s, manifests, digests)
	if err != nil {
		return Identity{}, err
	}
	values := map[string]any{
		"stack name":  s.StackName,
		"environment": s.Environment.String(),
		"template":    []any{sum(body), s.StackTemplateAssetObjectURL},
		"parameters":  s.Parameters,
		"tags":        s.Tags,
		// Termination protection and notifications decide what CloudFormation does on update.
		"termination protection": s.TerminationProtection,
		"notification ARNs":      s.NotificationARNs,
		"roles": []any{s.AssumeRoleARN, s.AssumeRoleExternalID, s.AssumeRoleAdditionalOptions,
			s.CloudFormationExecutionRoleARN, s.LookupRole},
		"assets": assets,
	}
	whole := sha256.New()
	id := Identity{Fields: map[string]string{}}
	for _, f := range identityFields {
		b, err := json.Marshal(values[f.name]) // map keys sorted: the encoding is canonical
		if err != nil {
			return Identity{}, err
		}
		d := sum(b)
		id.Fields[f.name] = d[:fieldDigestLen]
		fmt.Fprintf(whole, "%s=%s\n", f.name, d)
	}
	id.Digest = hex.EncodeToString(whole.Sum(nil))[:32]
	return id, nil
}

// stackAssets describes what the stack's asset manifests publish (or, for a stack of CDK v1,
// its own asset metadata): each asset's source and destinations as declared, and the digest of
// its content as it is on disk.
func stackAssets(a *assembly.Assembly, s *assembly.Stack, manifests map[string]*assembly.AssetManifest,
	digests map[string]string) ([]any, error) {
	content := func(rel string) (string, error) {
		if rel == "" {
			return "", nil // built by an executable: its command is in the source
		}
		if d, ok := digests[rel]; ok {
			return d, nil
		}
		d, err := a.ContentDigest(rel)
		digests[rel] = d
		return d, err
	}
	var out []any
	for _, dep := range slices.Sorted(slices.Values(s.Dependencies)) {
		qid := dep
		if s.NestedPath != "" {
			qid = s.NestedPath + "/" + dep
		}
		m := manifests[qid]
		if m == nil {
			continue
		}
		for _, f := range m.Files {
			d, err := content(f.Source.ResolvedPath)
			if err != nil {
				return nil, fmt.Errorf("asset %s: %w", f.ID, err)
			}
			out = append(out, []any{qid, f.ID, f.Source, f.Destinations, d})
		}
		for _, img := range m.DockerImages {
			d, err := content(img.Source.ResolvedDirectory)
			if err != nil {
				return nil, fmt.Errorf("asset %s: %w", img.ID, err)
			}
			out = append(out, []any{qid, img.ID, img.Source, img.Destinations, d})
		}
	}
	for _, la := range s.LegacyAssets() {
		d, err := content(la.ResolvedPath)
		if err != nil {
			return nil, fmt.Errorf("asset %s: %w", la.ID, err)
		}
		out = append(out, []any{la, d})
	}
	return out, nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// DeployTemplates are the bytes each stack of a deploys, by qualified id: mutated (the
// policy-mutated templates) where the policy changed them, else the template file. A deploy that
// compares identities hands exactly these to CloudFormation, so what deploys cannot change after
// the comparison.
func DeployTemplates(a *assembly.Assembly, mutated map[string][]byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, s := range a.AllStacks() {
		if body, ok := mutated[s.QualifiedID()]; ok {
			out[s.QualifiedID()] = body
			continue
		}
		body, err := s.TemplateBytes()
		if err != nil {
			return nil, fmt.Errorf("stack %s: %w", s.QualifiedID(), err)
		}
		out[s.QualifiedID()] = body
	}
	return out, nil
}

// TemplateDigest names a template's bytes as CloudFormation stores them (GetTemplate returns
// the body it was given; outer white space aside): 32 hex characters of its sha256.
func TemplateDigest(body []byte) string {
	s := sha256.Sum256(bytes.TrimSpace(body))
	return hex.EncodeToString(s[:16])
}

// IdentityStrings encodes identities for the marker, by qualified stack id.
func IdentityStrings(ids map[string]Identity) map[string]string {
	out := make(map[string]string, len(ids))
	for _, k := range slices.Sorted(maps.Keys(ids)) {
		out[k] = ids[k].String()
	}
	return out
}
