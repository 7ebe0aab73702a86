// Package cfn is cdkbot's model of a CloudFormation template: JSON and YAML (with the short-form
// intrinsics such as !Ref and !GetAtt) decoded into ordered values, and the references between
// resources (Ref, Fn::GetAtt, Fn::Sub, DependsOn) that replacement propagates through.
//
// Values keep the template's key order so that renderers show properties as authors wrote them,
// and numbers keep their literal text so nothing is rounded.
package cfn

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
)

// A template value is one of: nil, bool, string, Number, []any, *Object.

// Number is a numeric literal as written in the template.
type Number string

// Float returns the number's value; ok is false for text that is not a finite number.
func (n Number) Float() (float64, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// Object is a JSON object that remembers the order of its keys.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Set adds or replaces a key; a replaced key keeps its position.
func (o *Object) Set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// Get returns the value of key.
func (o *Object) Get(key string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[key]
	return v, ok
}

// Has reports whether key is present.
func (o *Object) Has(key string) bool {
	_, ok := o.Get(key)
	return ok
}

// Keys returns the keys in template order.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// SortedKeys returns the keys in byte order.
func (o *Object) SortedKeys() []string {
	ks := append([]string(nil), o.Keys()...)
	sort.Strings(ks)
	return ks
}

// Len is the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// Delete removes a key.
func (o *Object) Delete(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// AsObject returns v as an object, or nil.
func AsObject(v any) *Object {
	o, _ := v.(*Object)
	return o
}

// Intrinsic returns the function name and argument when v is a single-key object whose key is
// "Ref", "Condition" or starts with "Fn::".
func Intrinsic(v any) (name string, arg any, ok bool) {
	o := AsObject(v)
	if o.Len() != 1 {
		return "", nil, false
	}
	k := o.keys[0]
	if k == "Ref" || strings.HasPrefix(k, "Fn::") {
		return k, o.vals[k], true
	}
	return "", nil, false
}

// Clone deep-copies a value.
func Clone(v any) any {
	switch x := v.(type) {
	case *Object:
		c := &Object{keys: append([]string(nil), x.keys...), vals: make(map[string]any, len(x.vals))}
		for k, e := range x.vals {
			c.vals[k] = Clone(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = Clone(e)
		}
		return c
	}
	return v
}

// MarshalJSON writes the object with its keys in template order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	writeJSON(&b, o)
	return []byte(b.String()), nil
}

// JSON renders a value as compact JSON in template key order, as JavaScript's JSON.stringify
// would (so text cdkbot shows matches what CDK users see elsewhere).
func JSON(v any) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

func writeJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeString(b, x)
	case Number:
		b.WriteString(x.Canonical())
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case *Object:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeJSON(b, x.vals[k])
		}
		b.WriteByte('}')
	default:
		raw, _ := json.Marshal(x)
		b.Write(raw)
	}
}

// encoding/json escapes <, > and & for HTML; JSON.stringify does not.
var unescapeHTML = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

func writeString(b *strings.Builder, s string) {
	raw, _ := json.Marshal(s)
	b.WriteString(unescapeHTML.Replace(string(raw)))
}

// Canonical renders the number as JavaScript would print it (1.50 → 1.5, 1e2 → 100).
func (n Number) Canonical() string {
	f, ok := n.Float()
	if !ok {
		return string(n)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	return strings.Replace(strings.Replace(s, "e+0", "e+", 1), "e-0", "e-", 1)
}
