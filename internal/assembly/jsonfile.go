package assembly

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// decodeGeneric parses JSON into generic values (numbers kept as json.Number, as the schema
// validator expects), turning syntax errors into issues with a line and column.
func decodeGeneric(file string, data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(file, data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		off := dec.InputOffset()
		return nil, &Error{File: file,
			Issues: []Issue{{Pointer: position(data, off), Message: "unexpected data after the top-level JSON value"}},
			Hint:   "The file is not valid JSON: it may have been written twice or truncated. Synthesize again."}
	}
	if ptr, off, ok := duplicateKey(data); ok {
		// Decoders keep one of the two and validators may see the other: refuse the ambiguity.
		return nil, &Error{File: file,
			Issues: []Issue{{Pointer: ptr + " (" + position(data, off) + ")", Message: "the key appears twice in its object"}},
			Hint:   "The file was edited or damaged: each key may appear once. Synthesize the app again."}
	}
	return v, nil
}

// duplicateKey finds the first key that appears twice in one object, as a JSON pointer and the
// offset after it. The data is valid JSON (already decoded).
func duplicateKey(data []byte) (string, int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		keys   map[string]bool
		path   string
		index  int
		key    string // the key whose value comes next (objects)
	}
	var stack []*frame
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.object {
			return f.path + "/" + pointerEscaper.Replace(f.key)
		}
		return fmt.Sprintf("%s/%d", f.path, f.index)
	}
	expectKey := func() bool {
		if len(stack) == 0 {
			return false
		}
		f := stack[len(stack)-1]
		return f.object && f.key == ""
	}
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		f := stack[len(stack)-1]
		if f.object {
			f.key = ""
		} else {
			f.index++
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", 0, false
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, &frame{object: t == '{', keys: map[string]bool{}, path: child()})
			case '}', ']':
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if expectKey() {
				f := stack[len(stack)-1]
				if f.keys[t] {
					f.key = t
					return child(), dec.InputOffset(), true
				}
				f.keys[t], f.key = true, t
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

// decodeTyped unmarshals JSON that already passed schema validation into a Go type. A type
// mismatch here means the schema and the Go model disagree, still reported with a position.
func decodeTyped(file string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return jsonError(file, data, err)
	}
	return nil
}

func jsonError(file string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the offending byte; point at it, not past it.
		return &Error{File: file,
			Issues: []Issue{{Pointer: position(data, max(syn.Offset-1, 0)), Message: "malformed JSON: " + syn.Error()}},
			Hint:   "The file is not valid JSON. Synthesize the app again; if it was edited by hand, fix it there.", Err: err}
	case errors.As(err, &typ):
		where := position(data, typ.Offset)
		if typ.Field != "" {
			where = "/" + typ.Field + " (" + where + ")"
		}
		return &Error{File: file,
			Issues: []Issue{{Pointer: where, Message: fmt.Sprintf("expected %s, found JSON %s", typ.Type, typ.Value)}}, Err: err}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{File: file,
			Issues: []Issue{{Pointer: position(data, int64(len(data))),
				Message: "malformed JSON: the file ends before the JSON value does"}},
			Hint: "The file is empty or truncated. Synthesize the app again.", Err: err}
	}
	return &Error{File: file, Issues: []Issue{{Message: err.Error()}}, Err: err}
}

// position turns a byte offset into "line L, column C" (both 1-based).
func position(data []byte, offset int64) string {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	line, col := 1, 1
	for _, c := range data[:offset] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d", line, col)
}
