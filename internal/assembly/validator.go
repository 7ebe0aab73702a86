package assembly

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// validator checks a value against one schema of an embedded document and, when it fails, says
// where. github.com/google/jsonschema-go does the validating: it costs nothing at start-up, which
// matters to a CLI that runs for milliseconds, but it reports only the first failure and not its
// place in the value. The place is found here by descending the value beside the schema and
// asking the library about each child, so every message still names its JSON pointer.
type validator struct {
	doc  *jsonschema.Schema // the whole schema file: $refs resolve against it
	at   string             // JSON pointer of the schema to check against; "" is the document
	mu   sync.Mutex
	seen map[string]*jsonschema.Resolved // resolved schemas by pointer, built on first use
}

func newValidator(doc *jsonschema.Schema, at string) (*validator, error) {
	v := &validator{doc: doc, at: at, seen: map[string]*jsonschema.Resolved{}}
	if _, err := v.resolved(at); err != nil {
		return nil, err
	}
	return v, nil
}

// resolved returns the schema at pointer ptr of the document, ready to validate with. Each is a
// shallow copy of the document whose $ref names the pointer (draft-07 ignores a $ref's siblings),
// so the definitions it refers to resolve as they do in the document.
func (v *validator) resolved(ptr string) (*jsonschema.Resolved, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if r, ok := v.seen[ptr]; ok {
		return r, nil
	}
	root := v.doc
	if ptr != "" {
		w := *v.doc
		w.Ref = "#" + ptr
		root = &w
	}
	r, err := root.Resolve(nil)
	if err != nil {
		return nil, err
	}
	v.seen[ptr] = r
	return r, nil
}

// Validate returns nil when value (decoded JSON, numbers as json.Number) matches the schema,
// else the issues found, each at its JSON pointer.
func (v *validator) Validate(value any) []Issue {
	value = numbersAsFloats(value)
	if v.check(v.at, value) == nil {
		return nil
	}
	var out []Issue
	v.explain(v.at, v.schemaAt(v.at), value, nil, &out)
	slices.SortStableFunc(out, func(a, b Issue) int { return strings.Compare(a.Pointer, b.Pointer) })
	return out
}

func (v *validator) check(ptr string, value any) error {
	r, err := v.resolved(ptr)
	if err != nil {
		return err
	}
	return r.Validate(value)
}

// explain appends the issues of a value known to fail the schema s (at pointer ptr): those of its
// failing children when any fails, else the schema's own complaint about the value.
func (v *validator) explain(ptr string, s *jsonschema.Schema, value any, where []string, out *[]Issue) {
	for s != nil && s.Ref != "" {
		ptr, s = v.follow(s.Ref)
	}
	if s == nil {
		*out = append(*out, Issue{Pointer: pointer(where), Message: "does not match the schema"})
		return
	}
	before := len(*out)
	for _, c := range v.children(ptr, s, value) {
		if v.check(c.schemaPtr, c.value) != nil {
			v.explain(c.schemaPtr, c.schema, c.value, append(slices.Clip(where), c.token...), out)
		}
	}
	if len(*out) > before {
		return
	}
	*out = append(*out, Issue{Pointer: pointer(where), Message: message(v.check(ptr, value))})
}

type child struct {
	schemaPtr string
	schema    *jsonschema.Schema
	value     any
	token     []string // what to add to the value's pointer: nothing for allOf branches
}

// children lists the parts of value that schema s checks with a schema of their own.
func (v *validator) children(ptr string, s *jsonschema.Schema, value any) []child {
	var out []child
	for i, b := range s.AllOf {
		out = append(out, child{fmt.Sprintf("%s/allOf/%d", ptr, i), b, value, nil})
	}
	switch val := value.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(val)) {
			key := pointerEscaper.Replace(k)
			if cs, ok := s.Properties[k]; ok {
				out = append(out, child{ptr + "/properties/" + key, cs, val[k], []string{k}})
				continue
			}
			matched := false
			for pat, cs := range s.PatternProperties {
				if re, err := regexp.Compile(pat); err == nil && re.MatchString(k) {
					out = append(out, child{ptr + "/patternProperties/" + pointerEscaper.Replace(pat), cs, val[k], []string{k}})
					matched = true
				}
			}
			if !matched && s.AdditionalProperties != nil && !isFalse(s.AdditionalProperties) {
				out = append(out, child{ptr + "/additionalProperties", s.AdditionalProperties, val[k], []string{k}})
			}
		}
	case []any:
		if s.Items != nil {
			for i, item := range val {
				out = append(out, child{ptr + "/items", s.Items, item, []string{fmt.Sprint(i)}})
			}
		}
	}
	return out
}

// isFalse says whether s is the schema `false` (the library reads it as {"not": {}}): a key it
// forbids is the parent's complaint, not a child's.
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// follow resolves a $ref of the document ("#" or "#/definitions/Name", all the embedded schemas use).
func (v *validator) follow(ref string) (string, *jsonschema.Schema) {
	if ref == "#" {
		return "", v.doc
	}
	if name, ok := strings.CutPrefix(ref, "#/definitions/"); ok && !strings.Contains(name, "/") {
		name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
		if s, ok := v.doc.Definitions[name]; ok {
			return ref[1:], s
		}
	}
	return "", nil
}

func (v *validator) schemaAt(ptr string) *jsonschema.Schema {
	if ptr == "" {
		return v.doc
	}
	_, s := v.follow("#" + ptr)
	return s
}

// messagePatterns read the library's complaints. They are compiled on the first failure, not at
// package init: every cdkbot process would pay for them, and most never see an invalid manifest.
var messagePatterns = sync.OnceValue(func() *patterns {
	return &patterns{
		validatingPrefix: regexp.MustCompile(`^(validating [^:]*: )+`),
		typeMismatch:     regexp.MustCompile(`(?s)^type: .* has type "(\w+)", want (.*)$`),
		missing:          regexp.MustCompile(`^required: missing properties: \[(.*)\]$`),
		unexpected:       regexp.MustCompile(`^unexpected additional properties \[(.*)\]$`),
		goQuoted:         regexp.MustCompile(`"(?:[^"\\]|\\.)*"`),
	}
})

type patterns struct {
	// validatingPrefix is the library's "validating <schema>: " wrapping, one per level.
	validatingPrefix, typeMismatch, missing, unexpected, goQuoted *regexp.Regexp
}

// maxMessage bounds a message: the library quotes the offending value, which may be large.
const maxMessage = 200

// message turns the library's complaint about one value into a line for the user.
func message(err error) string {
	if err == nil {
		return "does not match the schema"
	}
	p := messagePatterns()
	m := p.validatingPrefix.ReplaceAllString(err.Error(), "")
	switch {
	case strings.HasPrefix(m, "anyOf:"), strings.HasPrefix(m, "oneOf:"):
		return "matches none of the shapes the schema allows here"
	case p.typeMismatch.MatchString(m):
		sub := p.typeMismatch.FindStringSubmatch(m)
		return "got " + sub[1] + ", want " + strings.ReplaceAll(sub[2], `"`, "")
	case p.missing.MatchString(m):
		return plural("missing property", "missing properties", p.missing.FindStringSubmatch(m)[1])
	case p.unexpected.MatchString(m):
		return plural("property", "properties", p.unexpected.FindStringSubmatch(m)[1]) + " not allowed here"
	}
	if len(m) > maxMessage {
		m = m[:maxMessage] + "…"
	}
	return m
}

// plural names the properties of a Go-quoted list (`"a" "b"`) as `missing property 'a'` does.
func plural(one, many, quoted string) string {
	var names []string
	for _, f := range messagePatterns().goQuoted.FindAllString(quoted, -1) {
		if n, err := strconv.Unquote(f); err == nil {
			f = n
		}
		names = append(names, "'"+f+"'")
	}
	if len(names) == 1 {
		return one + " " + names[0]
	}
	return many + " " + strings.Join(names, ", ")
}

// numbersAsFloats returns value with json.Number replaced by float64, which is how the library
// recognises numbers (it would take a json.Number for a string). Containers without numbers are
// returned as they are, not copied.
func numbersAsFloats(value any) any {
	out, _ := floats(value)
	return out
}

func floats(value any) (any, bool) {
	switch val := value.(type) {
	case json.Number:
		if f, err := val.Float64(); err == nil {
			return f, true
		}
	case map[string]any:
		var out map[string]any
		for k, x := range val {
			if y, changed := floats(x); changed {
				if out == nil {
					out = maps.Clone(val)
				}
				out[k] = y
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, x := range val {
			if y, changed := floats(x); changed {
				if out == nil {
					out = slices.Clone(val)
				}
				out[i] = y
			}
		}
		if out != nil {
			return out, true
		}
	}
	return value, false
}
