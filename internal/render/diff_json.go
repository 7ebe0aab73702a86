package render

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

// The JSON view's shape is documented in the README; add fields, never rename them.

type diffJSON struct {
	Stacks  []stackJSON `json:"stacks"`
	Summary summaryJSON `json:"summary"`
}

type summaryJSON struct {
	Create        int  `json:"create"`
	Update        int  `json:"update"`
	Replace       int  `json:"replace"`
	MayReplace    int  `json:"mayReplace"`
	Destroy       int  `json:"destroy"`
	Orphan        int  `json:"orphan"`
	Import        int  `json:"import"`
	StacksChanged int  `json:"stacksChanged"`
	Broadening    bool `json:"broadening"`
}

type stackJSON struct {
	ID          string         `json:"id"`
	StackName   string         `json:"stackName"`
	DisplayName string         `json:"displayName"`
	Environment string         `json:"environment,omitempty"`
	Status      string         `json:"status"`
	Resources   []resourceJSON `json:"resources"`
	Attributes  sectionJSON    `json:"attributes"`
	Parameters  sectionJSON    `json:"parameters"`
	Outputs     sectionJSON    `json:"outputs"`
	Conditions  sectionJSON    `json:"conditions"`
	Mappings    sectionJSON    `json:"mappings"`
	Metadata    sectionJSON    `json:"metadata"`
	Transform   sectionJSON    `json:"transform"`
	Unknown     sectionJSON    `json:"unknown"`
	Security    securityJSON   `json:"security"`
	Nested      []stackJSON    `json:"nested"`
}

type sectionJSON struct {
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Updated []string `json:"updated"`
}

type resourceJSON struct {
	LogicalID   string         `json:"logicalId"`
	Path        string         `json:"constructPath,omitempty"`
	Impact      string         `json:"impact"`
	OldType     *string        `json:"oldType"`
	NewType     *string        `json:"newType"`
	Properties  []propertyJSON `json:"properties"`
	Other       []otherJSON    `json:"other"`
	Consequence string         `json:"consequence,omitempty"`
	// RefusedName is the name property that makes CloudFormation refuse the replacement.
	RefusedName  string `json:"refusedName,omitempty"`
	MetadataOnly bool   `json:"metadataOnly,omitempty"`
	UnknownType  bool   `json:"unknownType,omitempty"`
	// CloudFormation is the change set's replacement verdict (True, Conditional, False) when
	// one was asked; SpecImpact is the specification's impact when CloudFormation differs.
	CloudFormation string `json:"cloudFormationReplacement,omitempty"`
	SpecImpact     string `json:"specificationImpact,omitempty"`
}

type propertyJSON struct {
	Path               string                 `json:"path"`
	Impact             string                 `json:"impact"`
	Old                *value                 `json:"old,omitempty"`
	New                *value                 `json:"new,omitempty"`
	Changed            bool                   `json:"changed"`
	Details            []detailJSON           `json:"details,omitempty"`
	ReplacedReferences []string               `json:"replacedReferences,omitempty"`
	ChangedInputs      []cfndiff.ChangedInput `json:"changedInputs,omitempty"`
	Unknown            bool                   `json:"unknownToSpecification,omitempty"`
}

type detailJSON struct {
	Path string `json:"path"`
	Old  *value `json:"old,omitempty"`
	New  *value `json:"new,omitempty"`
}

type otherJSON struct {
	Key string `json:"key"`
	Old *value `json:"old,omitempty"`
	New *value `json:"new,omitempty"`
}

type securityJSON struct {
	StatementsAdded        []cfndiff.Statement               `json:"iamStatementsAdded"`
	StatementsRemoved      []cfndiff.Statement               `json:"iamStatementsRemoved"`
	ManagedPoliciesAdded   []cfndiff.ManagedPolicyAttachment `json:"managedPoliciesAdded"`
	ManagedPoliciesRemoved []cfndiff.ManagedPolicyAttachment `json:"managedPoliciesRemoved"`
	RulesAdded             []cfndiff.SecurityGroupRule       `json:"securityGroupRulesAdded"`
	RulesRemoved           []cfndiff.SecurityGroupRule       `json:"securityGroupRulesRemoved"`
	Broadening             bool                              `json:"broadening"`
}

// value is a template value in JSON, written as the template had it.
type value struct{ v any }

func (v *value) MarshalJSON() ([]byte, error) { return []byte(cfn.JSON(v.v)), nil }

func optValue(v any, present bool) *value {
	if !present {
		return nil
	}
	return &value{v}
}

// DiffJSON writes the report as one line of JSON: a 100-stack diff is megabytes, and indenting
// it cost more than computing it (pipe through jq to read it).
func DiffJSON(w io.Writer, r DiffReport) error {
	js := NewDiffJSONStream(w)
	for _, s := range r.Stacks {
		if err := js.Stack(s); err != nil {
			return err
		}
	}
	return js.Close()
}

// DiffJSONStream writes DiffJSON's document stack by stack, each stack encoded and written when it
// is given, then the summary, tallied as they went, on Close: the same bytes as DiffJSON for the
// same stacks in the same order, without holding the report or the document.
type DiffJSONStream struct {
	w      io.Writer
	counts Counts
	n      int
	err    error
}

// NewDiffJSONStream starts a JSON diff view on w.
func NewDiffJSONStream(w io.Writer) *DiffJSONStream { return &DiffJSONStream{w: w} }

// Stack writes the next top-level stack.
func (js *DiffJSONStream) Stack(s *cfndiff.StackDiff) error {
	sep := ","
	if js.n == 0 {
		sep = `{"stacks":[`
	}
	js.n++
	js.counts.Add(s)
	js.write(sep, stackToJSON(s))
	return js.err
}

// Close writes the summary and ends the document.
func (js *DiffJSONStream) Close() error { return js.closeWith("\n") }

// closeWith writes the summary, ends the document and writes tail (Close's newline, or what
// closes a document the diff is the last member of).
func (js *DiffJSONStream) closeWith(tail string) error {
	if js.n == 0 {
		js.write(`{"stacks":[`, nil)
	}
	c := js.counts
	js.write(`],"summary":`, summaryJSON{Create: c.Create, Update: c.Update, Replace: c.Replace,
		MayReplace: c.MayReplace, Destroy: c.Destroy, Orphan: c.Orphan, Import: c.Import,
		StacksChanged: c.StacksChanged, Broadening: c.Broadened})
	js.write("}"+tail, nil)
	return js.err
}

// write writes text and then v (when not nil) encoded as encodeJSON does, without its newline.
// Piece by piece, cleanJSON gives what it gives the whole document: every rune it changes is
// inside a string, and no "##[" spans two pieces (a piece ends with '}', ',', ':' or '[').
func (js *DiffJSONStream) write(text string, v any) {
	if js.err != nil {
		return
	}
	if _, js.err = io.WriteString(js.w, text); js.err != nil || v == nil {
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if js.err = enc.Encode(v); js.err != nil {
		return
	}
	_, js.err = js.w.Write(cleanJSON(bytes.TrimSuffix(b.Bytes(), []byte("\n"))))
}

func stackToJSON(s *cfndiff.StackDiff) stackJSON {
	d := s.Diff
	sec := d.Security
	out := stackJSON{ID: s.ID, StackName: s.StackName, DisplayName: s.DisplayName,
		Environment: s.Environment, Status: s.Status.String(), Resources: []resourceJSON{},
		Attributes: section(d.Attributes), Parameters: section(d.Parameters), Outputs: section(d.Outputs),
		Conditions: section(d.Conditions), Mappings: section(d.Mappings), Metadata: section(d.Metadata),
		Unknown: section(d.Unknown), Transform: section(onlyKey(d.Attributes, "Transform")), Nested: []stackJSON{},
		Security: securityJSON{StatementsAdded: nonNil(sec.StatementsAdded), StatementsRemoved: nonNil(sec.StatementsRemoved),
			ManagedPoliciesAdded: nonNil(sec.ManagedPoliciesAdded), ManagedPoliciesRemoved: nonNil(sec.ManagedPoliciesRemoved),
			RulesAdded: nonNil(sec.RulesAdded), RulesRemoved: nonNil(sec.RulesRemoved), Broadening: sec.Broadened()}}
	for _, r := range d.Resources {
		rj := resourceJSON{LogicalID: r.LogicalID, Path: s.Paths[r.LogicalID], Impact: r.Impact.String(),
			OldType: optString(r.OldType), NewType: optString(r.NewType),
			Properties: []propertyJSON{}, Other: []otherJSON{}, Consequence: r.Consequence(),
			RefusedName:  r.RefusedName,
			MetadataOnly: r.MetadataOnly(), UnknownType: r.UnknownType, CloudFormation: r.CloudFormation}
		if r.SpecImpact != cfndiff.NoChange {
			rj.SpecImpact = r.SpecImpact.String()
		}
		for _, p := range r.Properties {
			pj := propertyJSON{Path: p.Name, Impact: p.Impact.String(),
				Old: optValue(p.Old, p.OldPresent), New: optValue(p.New, p.NewPresent), Changed: p.Changed,
				ReplacedReferences: p.ReplacedReferences, ChangedInputs: p.ChangedInputs, Unknown: p.Unknown}
			details, _ := p.Details()
			for _, d := range details {
				if d.Path != "" {
					pj.Details = append(pj.Details, detailJSON{Path: d.Path,
						Old: optValue(d.Old, d.OldPresent), New: optValue(d.New, d.NewPresent)})
				}
			}
			rj.Properties = append(rj.Properties, pj)
		}
		for _, o := range r.Other {
			rj.Other = append(rj.Other, otherJSON{Key: o.Key,
				Old: optValue(o.Old, o.OldPresent), New: optValue(o.New, o.NewPresent)})
		}
		out.Resources = append(out.Resources, rj)
	}
	for _, n := range s.Nested {
		out.Nested = append(out.Nested, stackToJSON(n))
	}
	return out
}

func section(s cfndiff.SectionDiff) sectionJSON {
	return sectionJSON{Added: s.Keys(cfndiff.Added), Removed: s.Keys(cfndiff.Removed), Updated: s.Keys(cfndiff.Updated)}
}

func onlyKey(s cfndiff.SectionDiff, key string) cfndiff.SectionDiff {
	var out cfndiff.SectionDiff
	for _, c := range s.Changes {
		if c.Key == key {
			out.Changes = append(out.Changes, c)
		}
	}
	return out
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
