// Package resourcespec answers what CloudFormation does when a property of a resource changes
// (update in place, replace, maybe replace), which resource types hold state, and which
// resources and properties carry permissions (IAM policies, security-group rules).
//
// The data is the public resource specification as packaged in @aws-cdk/aws-service-spec, the
// database @aws-cdk/cloudformation-diff uses, vendored by generate.sh into spec.tsv.gz (58 KB)
// and parsed on first use.
package resourcespec

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

//go:generate ./generate.sh

//go:embed spec.tsv.gz
var specGz []byte

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
	types  map[string]*Type
}

// Type returns the named resource type, or nil when the specification does not know it
// (Custom::*, AWS::CDK::Metadata, a type newer than the data).
func (s *Spec) Type(name string) *Type { return s.types[name] }

// Len is the number of resource types.
func (s *Spec) Len() int { return len(s.types) }

var loadDefault = sync.OnceValues(func() (*Spec, error) { return Parse(specGz) })

// Default returns the embedded specification. The data is tested at build time, so a failure
// here means a corrupted binary.
func Default() *Spec {
	s, err := loadDefault()
	if err != nil {
		panic(fmt.Sprintf("embedded resource specification: %v", err))
	}
	return s
}

// Parse reads gzipped data in the format generate.sh writes.
func Parse(gz []byte) (*Spec, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	s := &Spec{types: map[string]*Type{}}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if rest, ok := strings.CutPrefix(text, "# "); ok {
			if s.Source == "" {
				s.Source, _, _ = strings.Cut(rest, " ")
			}
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) != 4 {
			return nil, fmt.Errorf("line %d: want 4 tab-separated fields, got %d", line, len(fields))
		}
		t := &Type{Name: fields[0], Stateful: fields[1] == "s", index: map[string]int{}}
		if fields[2] != "-" {
			t.Scrutiny = Scrutiny(fields[2])
		}
		if fields[3] != "" {
			for _, p := range strings.Split(fields[3], ",") {
				name, spec, ok := strings.Cut(p, "=")
				if !ok {
					return nil, fmt.Errorf("line %d: property %q has no behaviour", line, p)
				}
				code, scrutiny, _ := strings.Cut(spec, "/")
				prop := Property{Name: name, Scrutiny: Scrutiny(scrutiny)}
				switch code {
				case "u":
					prop.Behaviour = Mutable
				case "r":
					prop.Behaviour = Immutable
				case "m":
					prop.Behaviour = Conditional
				default:
					return nil, fmt.Errorf("line %d: property %s has behaviour %q", line, name, code)
				}
				t.index[name] = len(t.Properties)
				t.Properties = append(t.Properties, prop)
			}
		}
		s.types[t.Name] = t
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return s, nil
}
