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

// Object is a JSON object that remembers the order of its keys. Most template objects are
// small, so keys and values live in slices and a map index is built only for large objects.
type Object struct {
	keys  []string
	vals  []any
	index map[string]int // nil until the object has more than indexThreshold keys
}

const indexThreshold = 8

// NewObject returns an empty object.
func NewObject() *Object { return &Object{} }

// newObjectOf makes an object of parsed members in one allocation each for keys and values. A
// key that appears twice is not taken: the object is nil and repeated the index in keys of its
// second appearance.
func newObjectOf(keys []string, vals []any) (o *Object, repeated int) {
	o = &Object{keys: make([]string, 0, len(keys)), vals: make([]any, 0, len(vals))}
	if len(keys) > indexThreshold {
		o.index = make(map[string]int, len(keys))
	}
	for i, k := range keys {
		if o.find(k) >= 0 {
			return nil, i
		}
		if o.index != nil {
			o.index[k] = len(o.keys)
		}
		o.keys = append(o.keys, k)
		o.vals = append(o.vals, vals[i])
	}
	return o, -1
}

func (o *Object) find(key string) int {
	if o.index != nil {
		if i, ok := o.index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range o.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// Set adds or replaces a key; a replaced key keeps its position.
func (o *Object) Set(key string, v any) {
	if i := o.find(key); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, v)
	switch {
	case o.index != nil:
		o.index[key] = len(o.keys) - 1
	case len(o.keys) > indexThreshold:
		o.index = make(map[string]int, len(o.keys)*2)
		for i, k := range o.keys {
			o.index[k] = i
		}
	}
}

// Get returns the value of key.
func (o *Object) Get(key string) (any, bool) {
	if o == nil {
		return nil, false
	}
	if i := o.find(key); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// Has reports whether key is present.
func (o *Object) Has(key string) bool {
	return o != nil && o.find(key) >= 0
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
	i := o.find(key)
	if i < 0 {
		return
	}
	o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
	o.vals = append(o.vals[:i:i], o.vals[i+1:]...)
	if o.index != nil {
		o.index = nil
		if len(o.keys) > indexThreshold {
			o.index = make(map[string]int, len(o.keys))
			for j, k := range o.keys {
				o.index[k] = j
			}
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
		return k, o.vals[0], true
	}
	return "", nil, false
}

// Clone deep-copies a value.
func Clone(v any) any {
	switch x := v.(type) {
	case *Object:
		c := NewObject()
		for i, k := range x.keys {
			c.Set(k, Clone(x.vals[i]))
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
		if s := x.Canonical(); jsonNumber(s) {
			b.WriteString(s)
		} else {
			writeString(b, s) // YAML's .inf, .nan or a tagged !!float that JSON has no number for
		}
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
			writeJSON(b, x.vals[i])
		}
		b.WriteByte('}')
	default:
		raw, _ := json.Marshal(x)
		b.Write(raw)
	}
}

// jsonNumber says whether s is a number as JSON writes one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(s string) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// encoding/json escapes <, > and & for HTML; JSON.stringify does not.
var unescapeHTML = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

func writeString(b *strings.Builder, s string) {
	if plainASCII(s) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	raw, _ := json.Marshal(s)
	b.WriteString(unescapeHTML.Replace(string(raw)))
}

// plainASCII is true for strings JSON writes verbatim: printable ASCII without '"' or '\\'.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
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
