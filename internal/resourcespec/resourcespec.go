// Package resourcespec answers what CloudFormation does when a property of a resource changes
// (update in place, replace, maybe replace), which resource types hold state, and which
// resources and properties carry permissions (IAM policies, security-group rules).
//
// The data is the public resource specification as packaged in @aws-cdk/aws-service-spec, the
// database @aws-cdk/cloudformation-diff uses, vendored by generate.sh into spec.tsv (252 KB).
// The table is indexed by type on first use and a type's properties are parsed only when that
// type is looked up, so a short-lived process pays for the types it meets, not all 1,828.
package resourcespec

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

//go:generate ./generate.sh

//go:embed spec.tsv
var specTSV string

// Behaviour is what CloudFormation does to a resource when a property changes.
type Behaviour uint8

// Property update behaviours. Unknown means the specification does not list the property (or
// its type): cdkbot reports such changes as updates and says the type is unknown.
const (
	Unknown Behaviour = iota
	Mutable
	Conditional
	Immutable
)

func (b Behaviour) String() string {
	return [...]string{"unknown", "mutable", "conditional", "immutable"}[b]
}

// Scrutiny classifies resources and properties that grant or restrict access.
type Scrutiny string

// Scrutiny classes, as named in the specification.
const (
	NoScrutiny                   Scrutiny = ""
	IdentityPolicyResource       Scrutiny = "IdentityPolicyResource"
	ResourcePolicyResource       Scrutiny = "ResourcePolicyResource"
	LambdaPermission             Scrutiny = "LambdaPermission"
	IngressRuleResource          Scrutiny = "IngressRuleResource"
	EgressRuleResource           Scrutiny = "EgressRuleResource"
	SsoAssignmentResource        Scrutiny = "SsoAssignmentResource"
	SsoInstanceACAConfigResource Scrutiny = "SsoInstanceACAConfigResource"
	SsoPermissionSet             Scrutiny = "SsoPermissionSet"
	InlineIdentityPolicies       Scrutiny = "InlineIdentityPolicies"
	InlineResourcePolicy         Scrutiny = "InlineResourcePolicy"
	ManagedPolicies              Scrutiny = "ManagedPolicies"
	IngressRules                 Scrutiny = "IngressRules"
	EgressRules                  Scrutiny = "EgressRules"
)

// Type is one resource type of the specification.
type Type struct {
	Name     string
	Stateful bool
	Scrutiny Scrutiny
	// Properties in name order, each with its behaviour and scrutiny.
	Properties []Property
	index      map[string]int
}

// Property is one property of a resource type.
type Property struct {
	Name      string
	Behaviour Behaviour
	Scrutiny  Scrutiny
}

// Property returns the named property; ok is false when the type does not list it.
func (t *Type) Property(name string) (Property, bool) {
	if t == nil {
		return Property{}, false
	}
	i, ok := t.index[name]
	if !ok {
		return Property{}, false
	}
	return t.Properties[i], true
}

// Spec is the resource specification.
type Spec struct {
	Source string // the package and version the data came from

	lines map[string]string // type name → the rest of its line, parsed on demand
	mu    sync.Mutex
	types map[string]*Type
	err   error
}

// Type returns the named resource type, or nil when the specification does not know it
// (Custom::*, AWS::CDK::Metadata, a type newer than the data).
func (s *Spec) Type(name string) *Type {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.types[name]; ok {
		return t
	}
	line, ok := s.lines[name]
	if !ok {
		return nil
	}
	t, err := parseType(name, line)
	if err != nil {
		// The embedded data is validated by the package tests; a bad line degrades to "unknown".
		s.err = err
		return nil
	}
	s.types[name] = t
	return t
}

// Len is the number of resource types.
func (s *Spec) Len() int { return len(s.lines) }

// Validate parses every type, for tests and generators.
func (s *Spec) Validate() error {
	for name, line := range s.lines {
		if _, err := parseType(name, line); err != nil {
			return err
		}
	}
	return nil
}

var loadDefault = sync.OnceValue(func() *Spec { return Parse(specTSV) })

// Default returns the embedded specification.
func Default() *Spec { return loadDefault() }

// Parse indexes data in the format generate.sh writes; lines are parsed on lookup.
func Parse(data string) *Spec {
	s := &Spec{lines: map[string]string{}, types: map[string]*Type{}}
	for len(data) > 0 {
		line, rest, _ := strings.Cut(data, "\n")
		data = rest
		if c, ok := strings.CutPrefix(line, "# "); ok {
			if s.Source == "" {
				s.Source, _, _ = strings.Cut(c, " ")
			}
			continue
		}
		if name, fields, ok := strings.Cut(line, "\t"); ok {
			s.lines[name] = fields
		}
	}
	return s
}

func parseType(name, line string) (*Type, error) {
	fields := strings.Split(line, "\t")
	if len(fields) != 3 {
		return nil, fmt.Errorf("type %s: want 4 tab-separated fields, got %d", name, len(fields)+1)
	}
	t := &Type{Name: name, Stateful: fields[0] == "s", index: map[string]int{}}
	if fields[1] != "-" {
		t.Scrutiny = Scrutiny(fields[1])
	}
	if fields[2] == "" {
		return t, nil
	}
	for _, p := range strings.Split(fields[2], ",") {
		pname, spec, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("type %s: property %q has no behaviour", name, p)
		}
		code, scrutiny, _ := strings.Cut(spec, "/")
		prop := Property{Name: pname, Scrutiny: Scrutiny(scrutiny)}
		switch code {
		case "u":
			prop.Behaviour = Mutable
		case "r":
			prop.Behaviour = Immutable
		case "m":
			prop.Behaviour = Conditional
		default:
			return nil, fmt.Errorf("type %s: property %s has behaviour %q", name, pname, code)
		}
		t.index[pname] = len(t.Properties)
		t.Properties = append(t.Properties, prop)
	}
	return t, nil
}
