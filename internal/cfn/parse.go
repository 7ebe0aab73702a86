package cfn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SyntaxError is a template that is not valid JSON or YAML; it says where.
type SyntaxError struct {
	Line, Column int
	Msg          string
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

// ParseJSON decodes one JSON value keeping object key order and number literals.
func ParseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, jsonSyntax(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		l, c := lineCol(data, dec.InputOffset())
		return nil, &SyntaxError{Line: l, Column: c, Msg: "unexpected data after the template"}
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := NewObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.Set(key, v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %q", t)
	case json.Number:
		return Number(t), nil
	}
	return tok, nil // string, bool, nil
}

func jsonSyntax(data []byte, dec *json.Decoder, err error) error {
	var syn *json.SyntaxError
	offset := dec.InputOffset()
	if errors.As(err, &syn) {
		offset = syn.Offset // the token decoder reports the offending byte's own offset
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		offset = int64(len(data))
		err = errors.New("the template ends before its JSON does")
	}
	l, c := lineCol(data, offset)
	return &SyntaxError{Line: l, Column: c, Msg: "malformed JSON: " + err.Error()}
}

func lineCol(data []byte, offset int64) (int, int) {
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
	return fromYAML(doc.Content[0])
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

func fromYAML(n *yaml.Node) (any, error) {
	if n.Kind == yaml.AliasNode {
		return fromYAML(n.Alias)
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return shortForm(n)
	}
	switch n.Kind {
	case yaml.MappingNode:
		o := NewObject()
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			val, err := fromYAML(v)
			if err != nil {
				return nil, err
			}
			o.Set(k.Value, val)
		}
		return o, nil
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := fromYAML(c)
			if err != nil {
				return nil, err
			}
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
func shortForm(n *yaml.Node) (any, error) {
	tag := strings.TrimPrefix(n.Tag, "!")
	inner := *n
	inner.Tag = ""
	if n.Kind == yaml.ScalarNode {
		inner.Tag = "!!str"
	}
	arg, err := fromYAML(&inner)
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
