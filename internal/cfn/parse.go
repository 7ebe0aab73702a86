package cfn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SyntaxError is a template that is not valid JSON or YAML, or that has a key twice in one
// object; it says where.
type SyntaxError struct {
	Line, Column int
	Msg          string
	// RepeatedKey is the key, when the error is a key that appears twice in one object (JSON
	// parsers keep one of the two, and which one differs: CloudFormation could deploy the value a
	// review did not show).
	RepeatedKey string
	// Pointer is the JSON pointer of the object that repeats RepeatedKey ("/" for the top).
	Pointer string
	// Offset is the byte offset the error is at: where the repeated key starts, or the byte that
	// is wrong (the length of the data when it ends too early). JSON only: 0 for YAML.
	Offset int
}

// repeatedKey is the error for a key that appears twice in the object at pointer.
func repeatedKey(key, pointer string, line, col, offset int) *SyntaxError {
	if pointer == "" {
		pointer = "/"
	}
	return &SyntaxError{Line: line, Column: col, RepeatedKey: key, Pointer: pointer, Offset: offset,
		Msg: fmt.Sprintf("the key %q appears twice in the object at %s: each key may appear once", key, pointer)}
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Parse decodes a template written in JSON or YAML. The format is sniffed from the first
// non-blank character, as CloudFormation does: JSON templates start with '{'.
func Parse(data []byte) (*Object, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) == 0 {
		return nil, &SyntaxError{Msg: "the template is empty"}
	}
	var v any
	var err error
	if trimmed[0] == '{' || trimmed[0] == '[' {
		v, err = ParseJSON(data)
	} else {
		v, err = ParseYAML(data)
	}
	if err != nil {
		return nil, err
	}
	o, ok := v.(*Object)
	if !ok {
		return nil, &SyntaxError{Msg: "a template must be an object (a mapping at the top level)"}
	}
	return o, nil
}

// ParseJSON decodes one JSON value keeping object key order and number literals. It is a
// small recursive-descent parser: encoding/json's token API, the only ordered alternative in
// the standard library, made parsing most of a whole diff's time (7.5 ms per 500 resources).
// Strings with escapes or non-ASCII bytes are decoded by encoding/json, so results are the same.
func ParseJSON(data []byte) (any, error) {
	return (&jsonParser{data: data}).top("unexpected data after the template")
}

// DecodeJSON decodes one JSON value into what encoding/json gives with UseNumber (map[string]any,
// []any, json.Number, string, bool, nil), in one pass that also refuses a key repeated in an
// object, with the same *SyntaxError as ParseJSON: where encoding/json would silently keep the
// last of the two, a reader of the file (a schema validator, a person) may have seen the first.
func DecodeJSON(data []byte) (any, error) {
	return (&jsonParser{data: data, plain: true}).top("unexpected data after the top-level JSON value")
}

func (p *jsonParser) top(trailing string) (any, error) {
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.fail(trailing)
	}
	return v, nil
}

// maxDepth bounds nesting, as encoding/json does, so hostile input cannot exhaust the stack.
const maxDepth = 10000

type jsonParser struct {
	data []byte
	pos  int
	// keys and vals hold the members of the objects and arrays being read, innermost last, so
	// that each becomes one exact-size allocation when it closes instead of growing as it goes;
	// offs holds where each key starts, to say where a repeated one is.
	keys []string
	vals []any
	offs []int
	// path is where the value being read is: a key for each object, an index for each array.
	path []step
	// plain makes objects map[string]any and numbers json.Number (DecodeJSON).
	plain bool
	// interned are the object keys read so far (key).
	interned map[string]string
}

// step is one level of a path: a key, or an index when key is not set.
type step struct {
	key   string
	index int
	isKey bool
}

// pointer is the JSON pointer of the value being read.
func (p *jsonParser) pointer() string { return pointerOf(p.path) }

// pointerEscaper escapes a key as a JSON pointer token (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointerOf is the JSON pointer of a path.
func pointerOf(path []step) string {
	var b strings.Builder
	for _, s := range path {
		b.WriteByte('/')
		if s.isKey {
			b.WriteString(pointerEscaper.Replace(s.key))
		} else {
			b.WriteString(strconv.Itoa(s.index))
		}
	}
	return b.String()
}

func (p *jsonParser) fail(msg string) error {
	l, c := LineCol(p.data, int64(p.pos))
	switch {
	case p.pos >= len(p.data) && p.plain:
		msg = "the file ends before the JSON value does"
	case p.pos >= len(p.data):
		msg = "the template ends before its JSON does"
	}
	return &SyntaxError{Line: l, Column: c, Msg: "malformed JSON: " + msg, Offset: min(p.pos, len(p.data))}
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.fail("nested too deeply")
	}
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.fail("")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.fail(fmt.Sprintf("invalid character %q looking for beginning of value", c))
	}
}

func (p *jsonParser) literal(word string) error {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		return p.fail(fmt.Sprintf("invalid literal, expected %q", word))
	}
	p.pos += len(word)
	return nil
}

func (p *jsonParser) object(depth int) (any, error) {
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		if p.plain {
			return map[string]any{}, nil
		}
		return NewObject(), nil
	}
	keys, vals := len(p.keys), len(p.vals)
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail("expected a string key")
		}
		at := p.pos
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail("expected ':' after object key")
		}
		p.pos++
		p.path = append(p.path, step{key: k, isKey: true})
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		p.keys = append(p.keys, k)
		p.vals = append(p.vals, v)
		p.offs = append(p.offs, at)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail("")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			var o any
			var repeated int
			if p.plain {
				o, repeated = newMapOf(p.keys[keys:], p.vals[vals:])
			} else {
				o, repeated = newObjectOf(p.keys[keys:], p.vals[vals:])
			}
			if repeated >= 0 {
				at := p.offs[keys+repeated]
				line, col := LineCol(p.data, int64(at))
				return nil, repeatedKey(p.keys[keys+repeated], p.pointer(), line, col, at)
			}
			p.pop(keys, vals)
			return o, nil
		default:
			return nil, p.fail(fmt.Sprintf("invalid character %q after object value", p.data[p.pos]))
		}
	}
}

// newMapOf is newObjectOf for DecodeJSON.
func newMapOf(keys []string, vals []any) (map[string]any, int) {
	m := make(map[string]any, len(keys))
	for i, k := range keys {
		if _, ok := m[k]; ok {
			return nil, i
		}
		m[k] = vals[i]
	}
	return m, -1
}

// pop drops the members of the object or array that just closed from the scratch stacks.
func (p *jsonParser) pop(keys, vals int) {
	clear(p.keys[keys:])
	clear(p.vals[vals:])
	p.keys, p.vals, p.offs = p.keys[:keys], p.vals[:vals], p.offs[:keys]
}

func (p *jsonParser) array(depth int) (any, error) {
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return []any{}, nil
	}
	mark := len(p.vals)
	p.path = append(p.path, step{})
	for i := 0; ; i++ {
		p.path[len(p.path)-1].index = i
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.vals = append(p.vals, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail("")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			arr := append([]any(nil), p.vals[mark:]...)
			p.pop(len(p.keys), mark)
			p.path = p.path[:len(p.path)-1]
			return arr, nil
		default:
			return nil, p.fail(fmt.Sprintf("invalid character %q after array element", p.data[p.pos]))
		}
	}
}

// key reads an object key. Keys repeat across a template (Type, Properties, Ref, Fn::GetAtt,
// Key, Value): each distinct one is allocated once per parse, up to maxInterned of them.
func (p *jsonParser) key() (string, error) {
	if raw, ok := p.plainString(); ok {
		if k, ok := p.interned[string(raw)]; ok {
			return k, nil
		}
		k := string(raw)
		if len(p.interned) < maxInterned {
			if p.interned == nil {
				p.interned = map[string]string{}
			}
			p.interned[k] = k
		}
		return k, nil
	}
	return p.escapedString()
}

// maxInterned bounds the keys a parse keeps for reuse: a template of unique keys gains nothing.
const maxInterned = 4096

// plainString reads a string without escapes or non-ASCII bytes and returns its bytes; ok is
// false (and nothing is read) for any other string, which escapedString reads.
func (p *jsonParser) plainString() ([]byte, bool) {
	for i := p.pos + 1; i < len(p.data); i++ {
		switch c := p.data[i]; {
		case c == '"':
			raw := p.data[p.pos+1 : i]
			p.pos = i + 1
			return raw, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

func (p *jsonParser) string() (string, error) {
	if raw, ok := p.plainString(); ok {
		return string(raw), nil
	}
	return p.escapedString()
}

// escapedString reads a string plainString does not: escapes and UTF-8 (invalid sequences
// replaced) are encoding/json's to decode; a control character or a missing end is an error.
func (p *jsonParser) escapedString() (string, error) {
	start := p.pos
	p.pos++ // opening quote
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.data[start:p.pos], &s); err != nil {
				p.pos = start
				return "", p.fail("invalid string: " + strings.TrimPrefix(err.Error(), "json: "))
			}
			return s, nil
		case c == '\\':
			p.pos += 2
		case c < 0x20:
			return "", p.fail("control character in string")
		default:
			p.pos++
		}
	}
	return "", p.fail("")
}

func (p *jsonParser) number() (any, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.fail("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail("invalid number: digits must follow '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number: digits must follow the exponent")
		}
	}
	if p.plain {
		return json.Number(p.data[start:p.pos]), nil
	}
	return Number(p.data[start:p.pos]), nil
}

// LineCol turns a byte offset of data into a line and a column, both 1-based (an offset past
// the end counts as the end).
func LineCol(data []byte, offset int64) (int, int) {
	offset = min(offset, int64(len(data)))
	line, col := 1, 1
	for _, c := range data[:offset] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// ParseYAML decodes a YAML template, turning short-form intrinsics into their JSON form:
// !Ref X → {"Ref": "X"}, !GetAtt A.B → {"Fn::GetAtt": ["A", "B"]}, !Sub … → {"Fn::Sub": …}.
func ParseYAML(data []byte) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlSyntax(err)
	}
	if len(doc.Content) == 0 {
		return nil, &SyntaxError{Msg: "the template is empty"}
	}
	b := &yamlBudget{nodes: MaxYAMLNodes}
	return b.fromYAML(doc.Content[0], 0)
}

// Bounds on YAML templates: aliases are expanded, so a few bytes can stand for a cycle or an
// exponential tree; CloudFormation templates are nowhere near these.
const (
	MaxYAMLDepth = 256
	MaxYAMLNodes = 1_000_000
)

// yamlBudget counts the nodes a YAML template expands to; path is where the node being read is.
type yamlBudget struct {
	nodes int
	path  []step
}

func tooComplex(n *yaml.Node, what string) error {
	return &SyntaxError{Line: n.Line, Column: n.Column, Msg: "the template is too complex: " + what}
}

func yamlSyntax(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var line int
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ":"); ok {
			if l, convErr := strconv.Atoi(n); convErr == nil {
				line, msg = l, strings.TrimSpace(after)
			}
		}
	}
	return &SyntaxError{Line: line, Column: 1, Msg: "malformed YAML: " + msg}
}

func (b *yamlBudget) fromYAML(n *yaml.Node, depth int) (any, error) {
	if depth > MaxYAMLDepth {
		return nil, tooComplex(n, fmt.Sprintf(
			"nested more than %d levels deep (a YAML alias that contains itself?)", MaxYAMLDepth))
	}
	if b.nodes--; b.nodes < 0 {
		return nil, tooComplex(n, fmt.Sprintf(
			"it expands to more than %d values (YAML aliases multiply what they repeat)", MaxYAMLNodes))
	}
	if n.Kind == yaml.AliasNode {
		return b.fromYAML(n.Alias, depth+1)
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return b.shortForm(n, depth)
	}
	switch n.Kind {
	case yaml.MappingNode:
		o := NewObject()
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if _, ok := o.Get(k.Value); ok {
				return nil, repeatedKey(k.Value, pointerOf(b.path), k.Line, k.Column, 0)
			}
			b.path = append(b.path, step{key: k.Value, isKey: true})
			val, err := b.fromYAML(v, depth+1)
			if err != nil {
				return nil, err
			}
			b.path = b.path[:len(b.path)-1]
			o.Set(k.Value, val)
		}
		return o, nil
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			b.path = append(b.path, step{index: i})
			v, err := b.fromYAML(c, depth+1)
			if err != nil {
				return nil, err
			}
			b.path = b.path[:len(b.path)-1]
			arr = append(arr, v)
		}
		return arr, nil
	case yaml.ScalarNode:
		return yamlScalar(n)
	}
	return nil, &SyntaxError{Line: n.Line, Column: n.Column, Msg: "unsupported YAML node"}
}

func yamlScalar(n *yaml.Node) (any, error) {
	switch n.Tag {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, &SyntaxError{Line: n.Line, Column: n.Column, Msg: err.Error()}
		}
		return b, nil
	case "!!int":
		v := strings.ReplaceAll(n.Value, "_", "")
		if i, err := strconv.ParseInt(v, 0, 64); err == nil && !isDecimal(v) {
			return Number(strconv.FormatInt(i, 10)), nil // 0x10, 0o17 → decimal
		}
		return Number(v), nil
	case "!!float":
		return Number(n.Value), nil
	}
	return n.Value, nil
}

func isDecimal(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return s != "" && strings.Trim(s, "0123456789") == "" && (len(s) == 1 || s[0] != '0')
}

// shortForm converts a tagged node (!Ref, !GetAtt, !Sub, …) to its long form.
func (b *yamlBudget) shortForm(n *yaml.Node, depth int) (any, error) {
	tag := strings.TrimPrefix(n.Tag, "!")
	inner := *n
	inner.Tag = ""
	if n.Kind == yaml.ScalarNode {
		inner.Tag = "!!str"
	}
	arg, err := b.fromYAML(&inner, depth+1)
	if err != nil {
		return nil, err
	}
	o := NewObject()
	switch tag {
	case "Ref":
		o.Set("Ref", arg)
	case "Condition":
		o.Set("Condition", arg)
	case "GetAtt":
		if s, ok := arg.(string); ok {
			res, attr, _ := strings.Cut(s, ".")
			arg = []any{res, attr}
		}
		o.Set("Fn::GetAtt", arg)
	default:
		o.Set("Fn::"+tag, arg)
	}
	return o, nil
}
