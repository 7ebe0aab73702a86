package assembly

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// A schemaNode is one schema of a JSON Schema (draft-07) document, compiled once per process
// for the keywords the embedded schemas use. A general validator library resolved the whole
// document again for every entry point (seven times, ~40 ms of every run that reads an
// assembly) and named only the first failure; this one compiles in well under a millisecond,
// validates without reflection and says where each failure is. A keyword it does not know
// fails the compilation, so a schema update that needs one fails the package tests instead of
// being half checked. Measured against santhosh-tekuri/jsonschema compiled once (a maintained
// library): it adds 1.7 MB and ~3 ms to every process's start (its meta-schemas compile at
// package init), ~4 ms to compile these schemas, 7–9.5 ms to a whole-process diff. That library
// is this validator's oracle in the tests instead (validator_oracle_test.go).
type schemaNode struct {
	never      bool        // the schema `false`
	ref        *schemaNode // $ref: every other keyword is ignored (draft-07)
	types      []string
	enum       []any // enum, and const as a one-value enum
	required   []string
	properties map[string]*schemaNode
	patterns   []patternSchema
	additional *schemaNode // nil: anything
	items      *schemaNode
	allOf      []*schemaNode
	anyOf      []*schemaNode
	oneOf      []*schemaNode
	not        *schemaNode
}

type patternSchema struct {
	re     *regexp.Regexp
	source string
	schema *schemaNode
}

// annotations are keywords that do not constrain a value.
var annotations = map[string]bool{"description": true, "default": true, "title": true, "$schema": true,
	"$comment": true, "examples": true, "format": true, "readOnly": true, "writeOnly": true}

// schemaDoc is a compiled schema file: its root and its definitions, which $refs name.
type schemaDoc struct {
	root        *schemaNode
	definitions map[string]*schemaNode
}

// compileSchema compiles a schema document; only "#" and "#/definitions/NAME" references are
// allowed, which is all the cloud assembly schemas use.
func compileSchema(raw []byte) (*schemaDoc, error) {
	v, err := cfn.DecodeJSON(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the schema is not an object")
	}
	d := &schemaDoc{root: &schemaNode{}, definitions: map[string]*schemaNode{}}
	defs, _ := obj["definitions"].(map[string]any)
	for name := range defs {
		d.definitions[name] = &schemaNode{}
	}
	for name, def := range defs {
		if err := d.compileInto(d.definitions[name], def, "/definitions/"+name); err != nil {
			return nil, err
		}
	}
	rest := maps.Clone(obj)
	delete(rest, "definitions")
	if err := d.compileInto(d.root, rest, ""); err != nil {
		return nil, err
	}
	return d, nil
}

// at returns the schema at a pointer: "" is the root, "/definitions/NAME" a definition.
func (d *schemaDoc) at(ptr string) (*schemaNode, error) {
	if ptr == "" {
		return d.root, nil
	}
	if name, ok := strings.CutPrefix(ptr, "/definitions/"); ok {
		if n, ok := d.definitions[unescapePointer(name)]; ok {
			return n, nil
		}
	}
	return nil, fmt.Errorf("the schema has nothing at %s", ptr)
}

var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

func unescapePointer(s string) string { return pointerUnescaper.Replace(s) }

func (d *schemaDoc) compile(v any, where string) (*schemaNode, error) {
	n := &schemaNode{}
	return n, d.compileInto(n, v, where)
}

func (d *schemaDoc) compileInto(n *schemaNode, v any, where string) error {
	switch s := v.(type) {
	case bool:
		n.never = !s
		return nil
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			target := d.root
			if ref != "#" {
				// A $ref is a URI: its fragment is percent-encoded ("Record%3Cstring%2Cunknown%3E").
				name, ok := strings.CutPrefix(ref, "#/definitions/")
				target = nil
				if name, err := url.PathUnescape(name); ok && err == nil {
					target = d.definitions[unescapePointer(name)]
				}
				if target == nil {
					return fmt.Errorf("%s: $ref %q does not name a definition of the document", where, ref)
				}
			}
			n.ref = target
			return nil
		}
		for k, v := range s {
			if err := d.keyword(n, k, v, where+"/"+k); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: a schema is an object or a boolean", where)
}

func (d *schemaDoc) keyword(n *schemaNode, k string, v any, where string) error {
	var err error
	switch k {
	case "type":
		switch t := v.(type) {
		case string:
			n.types = []string{t}
		case []any:
			for _, x := range t {
				s, ok := x.(string)
				if !ok {
					return fmt.Errorf("%s: a type is a string", where)
				}
				n.types = append(n.types, s)
			}
		default:
			return fmt.Errorf("%s: type is a string or a list of strings", where)
		}
	case "enum":
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: enum is a list", where)
		}
		n.enum = list
	case "const":
		n.enum = []any{v}
	case "required":
		list, _ := v.([]any)
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return fmt.Errorf("%s: required lists strings", where)
			}
			n.required = append(n.required, s)
		}
	case "properties", "patternProperties":
		props, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %s is an object", where, k)
		}
		if k == "properties" {
			n.properties = make(map[string]*schemaNode, len(props))
		}
		for name, p := range props {
			c, err := d.compile(p, where+"/"+name)
			if err != nil {
				return err
			}
			if k == "properties" {
				n.properties[name] = c
				continue
			}
			re, err := regexp.Compile(name)
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			n.patterns = append(n.patterns, patternSchema{re: re, source: name, schema: c})
		}
		slices.SortFunc(n.patterns, func(a, b patternSchema) int { return strings.Compare(a.source, b.source) })
	case "additionalProperties":
		n.additional, err = d.compile(v, where)
	case "items":
		n.items, err = d.compile(v, where)
	case "not":
		n.not, err = d.compile(v, where)
	case "allOf", "anyOf", "oneOf":
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %s is a list", where, k)
		}
		var out []*schemaNode
		for i, x := range list {
			c, err := d.compile(x, fmt.Sprintf("%s/%d", where, i))
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		switch k {
		case "allOf":
			n.allOf = out
		case "anyOf":
			n.anyOf = out
		default:
			n.oneOf = out
		}
	default:
		if !annotations[k] {
			return fmt.Errorf("%s: keyword %q is not supported by cdkbot's schema validator", where, k)
		}
	}
	return err
}

// validator checks a value against one schema of a compiled document and, when it fails, says
// where: every failure at the JSON pointer of the value that fails.
type validator struct {
	schema *schemaNode
}

func newValidator(doc *schemaDoc, at string) (*validator, error) {
	n, err := doc.at(at)
	if err != nil {
		return nil, err
	}
	return &validator{schema: n}, nil
}

// Validate returns nil when value (decoded JSON; numbers as json.Number or float64) matches the
// schema, else the issues found, each at its JSON pointer, in pointer order.
func (v *validator) Validate(value any) []Issue {
	if valid(v.schema, value) {
		return nil
	}
	var out []Issue
	explain(v.schema, value, nil, &out)
	slices.SortStableFunc(out, func(a, b Issue) int { return strings.Compare(a.Pointer, b.Pointer) })
	return out
}

func deref(n *schemaNode) *schemaNode {
	for range 64 { // a cycle of bare $refs would never end
		if n.ref == nil {
			return n
		}
		n = n.ref
	}
	return &schemaNode{never: true}
}

// valid says whether value matches n, allocating nothing.
func valid(n *schemaNode, value any) bool {
	n = deref(n)
	if n.never {
		return false
	}
	if len(n.types) > 0 && !typeMatches(n.types, value) || len(n.enum) > 0 && !inEnum(n.enum, value) {
		return false
	}
	switch val := value.(type) {
	case map[string]any:
		for _, r := range n.required {
			if _, ok := val[r]; !ok {
				return false
			}
		}
		for k, x := range val {
			if !validMember(n, k, x) {
				return false
			}
		}
	case []any:
		if n.items != nil {
			for _, x := range val {
				if !valid(n.items, x) {
					return false
				}
			}
		}
	}
	for _, b := range n.allOf {
		if !valid(b, value) {
			return false
		}
	}
	if len(n.anyOf) > 0 && !slices.ContainsFunc(n.anyOf, func(b *schemaNode) bool { return valid(b, value) }) {
		return false
	}
	if len(n.oneOf) > 0 && matching(n.oneOf, value) != 1 {
		return false
	}
	return n.not == nil || !valid(n.not, value)
}

func validMember(n *schemaNode, k string, x any) bool {
	if c, ok := n.properties[k]; ok {
		return valid(c, x)
	}
	matched := false
	for _, p := range n.patterns {
		if p.re.MatchString(k) {
			matched = true
			if !valid(p.schema, x) {
				return false
			}
		}
	}
	return matched || n.additional == nil || valid(n.additional, x)
}

func matching(branches []*schemaNode, value any) int {
	count := 0
	for _, b := range branches {
		if valid(b, value) {
			count++
		}
	}
	return count
}

// explain appends the issues of a value known to fail n: those of its failing parts (members,
// items, allOf branches), and the schema's own complaints about the value itself.
func explain(n *schemaNode, value any, where []string, out *[]Issue) {
	n = deref(n)
	at := pointer(where)
	if n.never {
		*out = append(*out, Issue{Pointer: at, Message: "no value is allowed here"})
		return
	}
	if len(n.types) > 0 && !typeMatches(n.types, value) {
		*out = append(*out, Issue{Pointer: at, Message: "got " + jsonType(value) + ", want " + strings.Join(n.types, " or ")})
		return
	}
	if len(n.enum) > 0 && !inEnum(n.enum, value) {
		*out = append(*out, Issue{Pointer: at, Message: "got " + quote(value) + ", want " + enumText(n.enum)})
	}
	for _, b := range n.allOf {
		if !valid(b, value) {
			explain(b, value, where, out)
		}
	}
	switch val := value.(type) {
	case map[string]any:
		var missing, extra []string
		for _, r := range n.required {
			if _, ok := val[r]; !ok {
				missing = append(missing, r)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(val)) {
			if validMember(n, k, val[k]) {
				continue
			}
			child := append(slices.Clip(where), k)
			if c, ok := n.properties[k]; ok {
				explain(c, val[k], child, out)
				continue
			}
			matched := false
			for _, p := range n.patterns {
				if p.re.MatchString(k) {
					matched = true
					if !valid(p.schema, val[k]) {
						explain(p.schema, val[k], child, out)
					}
				}
			}
			if !matched && deref(n.additional).never {
				extra = append(extra, k)
			} else if !matched {
				explain(n.additional, val[k], child, out)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			*out = append(*out, Issue{Pointer: at, Message: names("missing property", "missing properties", missing)})
		}
		if len(extra) > 0 {
			*out = append(*out, Issue{Pointer: at, Message: names("property", "properties", extra) + " not allowed here"})
		}
	case []any:
		if n.items != nil {
			for i, x := range val {
				if !valid(n.items, x) {
					explain(n.items, x, append(slices.Clip(where), fmt.Sprint(i)), out)
				}
			}
		}
	}
	if len(n.anyOf) > 0 && !slices.ContainsFunc(n.anyOf, func(b *schemaNode) bool { return valid(b, value) }) ||
		len(n.oneOf) > 0 && matching(n.oneOf, value) == 0 {
		*out = append(*out, Issue{Pointer: at, Message: "matches none of the shapes the schema allows here"})
	}
	if len(n.oneOf) > 0 && matching(n.oneOf, value) > 1 {
		*out = append(*out, Issue{Pointer: at, Message: "matches more than one of the shapes the schema allows here"})
	}
	if n.not != nil && valid(n.not, value) {
		*out = append(*out, Issue{Pointer: at, Message: "matches a shape the schema forbids here"})
	}
}

// names lists property names as `missing property 'a'` or `missing properties 'a', 'b'` say them.
func names(one, many string, list []string) string {
	quoted := make([]string, len(list))
	for i, s := range list {
		quoted[i] = "'" + bounded(s) + "'"
	}
	if len(quoted) == 1 {
		return one + " " + quoted[0]
	}
	return many + " " + strings.Join(quoted, ", ")
}

// maxMessage bounds what a message quotes of a value: a hostile manifest may hold a huge one.
const maxMessage = 200

func bounded(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage] + "…"
	}
	return s
}

func quote(value any) string {
	b, err := json.Marshal(value)
	if err != nil {
		return jsonType(value)
	}
	return bounded(string(b))
}

func enumText(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = quote(e)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return bounded("one of " + strings.Join(parts, ", "))
}

// jsonType names the JSON type of a decoded value as JSON Schema does ("integer" for a whole number).
func jsonType(value any) string {
	switch val := value.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if !strings.ContainsAny(string(val), ".eE") || isWhole(string(val)) {
			return "integer"
		}
		return "number"
	case float64:
		if val == float64(int64(val)) {
			return "integer"
		}
		return "number"
	case int, int64:
		return "integer"
	}
	return fmt.Sprintf("%T", value)
}

// isWhole says whether a JSON number's text denotes a whole number (1, 1.0, 1e3).
func isWhole(s string) bool {
	r, ok := new(big.Rat).SetString(s)
	return ok && r.IsInt()
}

func typeMatches(types []string, value any) bool {
	got := jsonType(value)
	for _, t := range types {
		if t == got || t == "number" && got == "integer" {
			return true
		}
	}
	return false
}

func inEnum(enum []any, value any) bool {
	for _, e := range enum {
		if equalJSON(e, value) {
			return true
		}
	}
	return false
}

// equalJSON compares decoded JSON values, numbers by value whatever their Go type.
func equalJSON(a, b any) bool {
	if na, ok := number(a); ok {
		nb, ok := number(b)
		return ok && na.Cmp(nb) == 0
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, equalJSON)
	}
	return a == b
}

func number(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case json.Number:
		return new(big.Rat).SetString(string(x))
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	}
	return nil, false
}
