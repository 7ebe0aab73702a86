package assembly

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// decodeGeneric parses JSON into generic values (numbers kept as json.Number, as the schema
// validator expects) in one pass that also refuses a key repeated in an object, turning syntax
// errors into issues with a line and column.
func decodeGeneric(file string, data []byte) (any, error) {
	v, err := cfn.DecodeJSON(data)
	var syn *cfn.SyntaxError
	switch {
	case err == nil:
		return v, nil
	case !errors.As(err, &syn):
		return nil, &Error{File: file, Issues: []Issue{{Message: err.Error()}}, Err: err}
	case syn.RepeatedKey != "":
		// Decoders keep one of the two and validators may see the other: refuse the ambiguity.
		ptr := strings.TrimSuffix(syn.Pointer, "/") + "/" + pointerEscaper.Replace(syn.RepeatedKey)
		return nil, &Error{File: file,
			Issues: []Issue{{Pointer: ptr + " (" + position(data, int64(syn.Offset)) + ")",
				Message: "the key appears twice in its object"}},
			Hint: "The file was edited or damaged: each key may appear once. Synthesize the app again."}
	case strings.HasSuffix(syn.Msg, "after the top-level JSON value"):
		return nil, &Error{File: file,
			Issues: []Issue{{Pointer: position(data, int64(syn.Offset)),
				Message: "unexpected data after the top-level JSON value"}},
			Hint: "The file is not valid JSON: it may have been written twice or truncated. Synthesize again."}
	case syn.Offset >= len(data):
		return nil, &Error{File: file,
			Issues: []Issue{{Pointer: position(data, int64(len(data))),
				Message: "malformed JSON: the file ends before the JSON value does"}},
			Hint: "The file is empty or truncated. Synthesize the app again.", Err: err}
	}
	return nil, &Error{File: file, Issues: []Issue{{Pointer: position(data, int64(syn.Offset)), Message: syn.Msg}},
		Hint: "The file is not valid JSON. Synthesize the app again; if it was edited by hand, fix it there.", Err: err}
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
	line, col := cfn.LineCol(data, offset)
	return fmt.Sprintf("line %d, column %d", line, col)
}
