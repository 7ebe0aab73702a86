package cfn

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestJSONKeepsOrderAndNumbers(t *testing.T) {
	t.Parallel()
	o, err := Parse([]byte(`{"Resources": {"B": {"Type": "T", "Properties": {"Z": 1.50, "A": 10}}, "A": {"Type": "T"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	res := AsObject(mustGet(t, o, "Resources"))
	if got := res.Keys(); !reflect.DeepEqual(got, []string{"B", "A"}) {
		t.Errorf("resource order %v", got)
	}
	props := AsObject(mustGet(t, AsObject(mustGet(t, res, "B")), "Properties"))
	if v, _ := props.Get("Z"); v != Number("1.50") {
		t.Errorf("number literal %#v", v)
	}
	if got := JSON(props); got != `{"Z":1.5,"A":10}` {
		t.Errorf("JSON %s", got)
	}
}

// Nested members land in their own parent, in small objects and in those large enough to be
// indexed.
func TestJSONNesting(t *testing.T) {
	t.Parallel()
	v, err := ParseJSON([]byte(`{"a": 1, "b": {"x": [1, {"y": 2}, []], "z": "second"}, "c": 3,
		"k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": "eight", "l": [[], [1, [2]], {}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := AsObject(v)
	if got, want := o.Keys(), []string{"a", "b", "c", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "l"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	if got, want := JSON(o), `{"a":1,"b":{"x":[1,{"y":2},[]],"z":"second"},"c":3,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":"eight","l":[[],[1,[2]],{}]}`; got != want {
		t.Errorf("JSON %s\nwant %s", got, want)
	}
	if k8, _ := o.Get("k8"); k8 != "eight" {
		t.Errorf("indexed lookup: %v", k8)
	}
}

// A key that appears twice in one object is refused, in JSON and YAML, small objects and indexed
// ones, naming the key, the object (a JSON pointer) and where the second one is: parsers keep one
// of the two and which differs (CloudFormation could deploy the value the review did not show).
func TestRepeatedKeysAreRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, key, where string }{
		{`{"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "shown", "QueueName": "deployed"}}}}`,
			"QueueName", `the object at /Resources/Q/Properties: each key may appear once`},
		{`{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "e": 10}`, "e", "at /: "},
		{"{\n \"l\": [0, {\"a/b~\": {\"k\": 1,\n  \"k\": 2}}]}", "k", "at /l/1/a~1b~0: "},
		{"Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: shown\n      QueueName: deployed\n",
			"QueueName", "line 6, column 7: the key \"QueueName\" appears twice in the object at /Resources/Q/Properties"},
		{"Outputs: {}\nOutputs: {}\n", "Outputs", "line 2, column 1"},
		{"l:\n  - {a: 1, a: 2}\n", "a", "at /l/0: "},
	} {
		_, err := Parse([]byte(c.in))
		var se *SyntaxError
		if !errors.As(err, &se) || se.RepeatedKey != c.key || !strings.Contains(err.Error(), c.where) ||
			!strings.Contains(err.Error(), fmt.Sprintf("the key %q appears twice", c.key)) {
			t.Errorf("%q: %v, want the key %q refused %s", c.in, err, c.key, c.where)
		}
	}
	if _, err := Parse([]byte(`{"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 1}, {"k": 2}]}`)); err != nil {
		t.Errorf("the same key in different objects: %v", err)
	}
	if _, err := Parse([]byte("{\n  \"Resources\": {},\n  \"Resources\": {}\n}")); err == nil ||
		!strings.Contains(err.Error(), "line 3, column 3") {
		t.Errorf("position of the second key: %v", err)
	}
}

func TestYAMLShortForms(t *testing.T) {
	t.Parallel()
	o, err := Parse([]byte(`
Resources:
  Topic:
    Type: AWS::SNS::Topic
    Properties:
      Name: !Ref Prefix
      Arn: !GetAtt Queue.Arn
      Text: !Sub "${Queue.Arn}-${AWS::Region}-${!Literal}"
      Joined: !Join [",", [!Ref A, !GetAtt [B, Arn]]]
      Chosen: !If [Cond, !Ref C, !Ref "AWS::NoValue"]
      Count: 0x10
      On: true
      Off: "false"
`))
	if err != nil {
		t.Fatal(err)
	}
	props := AsObject(mustGet(t, AsObject(mustGet(t, AsObject(mustGet(t, o, "Resources")), "Topic")), "Properties"))
	want := `{"Name":{"Ref":"Prefix"},"Arn":{"Fn::GetAtt":["Queue","Arn"]},"Text":{"Fn::Sub":"${Queue.Arn}-${AWS::Region}-${!Literal}"},` +
		`"Joined":{"Fn::Join":[",",[{"Ref":"A"},{"Fn::GetAtt":["B","Arn"]}]]},"Chosen":{"Fn::If":["Cond",{"Ref":"C"},{"Ref":"AWS::NoValue"}]},` +
		`"Count":16,"On":true,"Off":"false"}`
	if got := JSON(props); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestReferences(t *testing.T) {
	t.Parallel()
	v, err := ParseJSON([]byte(`{
	  "A": {"Ref": "Bucket"},
	  "B": {"Fn::GetAtt": "Queue.Arn"},
	  "C": {"Fn::Join": ["", [{"Fn::GetAtt": ["Role", "Arn"]}, {"Fn::Select": [0, [{"Ref": "Nested"}]]}]]},
	  "D": {"Fn::Sub": "${Topic}/${Fn.Name}/${!NotARef}/${AWS::Region}"},
	  "E": {"Fn::Sub": ["${Local}-${Table}", {"Local": {"Ref": "Param"}}]},
	  "F": {"Fn::If": ["Cond", {"Ref": "InIf"}, "x"]}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range References(v) {
		got = append(got, r.Target+"."+r.Attribute)
	}
	sort.Strings(got)
	want := []string{"AWS::Region.", "Bucket.", "Fn.Name", "InIf.", "Nested.", "Param.", "Queue.Arn", "Role.Arn", "Table.", "Topic."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestSyntaxErrorsSayWhere(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"{\n  \"Resources\": {,}\n}", "line 2, column 17"},
		{`{"Resources": `, "ends before"},
		{"Resources:\n  A: [\n", "malformed YAML"},
		{"", "empty"},
		{"[]", "must be an object"},
	} {
		_, err := Parse([]byte(tc.in))
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestDependsOn(t *testing.T) {
	t.Parallel()
	o := NewObject()
	o.Set("DependsOn", "A")
	if got := DependsOn(o); !reflect.DeepEqual(got, []string{"A"}) {
		t.Error(got)
	}
	o.Set("DependsOn", []any{"B", "C"})
	if got := DependsOn(o); !reflect.DeepEqual(got, []string{"B", "C"}) {
		t.Error(got)
	}
}

func mustGet(t *testing.T, o *Object, k string) any {
	t.Helper()
	v, ok := o.Get(k)
	if !ok {
		t.Fatalf("no key %q", k)
	}
	return v
}

// FuzzParse: any input parses or fails with a SyntaxError, never panics, and a parsed JSON
// template renders back to JSON that parses to the same rendering.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"Resources": {"A": {"Type": "X"}}}`, "Resources:\n  A: !GetAtt B.C\n", `{"a": [1, 2.5e3, null, true]}`, "!Sub x", "a: &x 1\nb: *x\n", "a: &a [*a]\n", "a: &a [x,x]\nb: &b [*a,*a]\nc: [*b,*b]\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		// Differential check: a JSON document is accepted exactly when encoding/json accepts it,
		// unless a key appears twice in one of its objects (encoding/json takes the last one).
		if trimmed := strings.TrimLeft(in, " \t\r\n"); strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
			_, ours := ParseJSON([]byte(in))
			var se *SyntaxError
			if repeated := errors.As(ours, &se) && se.RepeatedKey != ""; !repeated && (ours == nil) != json.Valid([]byte(in)) {
				t.Fatalf("ParseJSON error %v, json.Valid %v for %q", ours, json.Valid([]byte(in)), in)
			}
		}
		o, err := Parse([]byte(in))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("untyped error %T", err)
			}
			return
		}
		out := JSON(o)
		again, err := Parse([]byte(out))
		if err != nil || JSON(again) != out {
			t.Fatalf("round trip: %v\n%s\n%s", err, out, JSON(again))
		}
		References(o)
	})
}

// Hostile YAML is refused with a clear error, in bounded time and memory: an alias that contains
// itself (11 bytes), and an alias bomb (each level repeats the previous nine times).
func TestHostileYAML(t *testing.T) {
	t.Parallel()
	if _, err := Parse([]byte("a: &a [*a]\n")); err == nil || !strings.Contains(err.Error(), "too complex") {
		t.Errorf("self-containing alias: %v", err)
	}
	if _, err := Parse([]byte(hostileInputs()["alias-bomb"])); err == nil || !strings.Contains(err.Error(), "expands to more than") {
		t.Errorf("alias bomb: %v", err)
	}
	// Ordinary aliases still work.
	v, err := Parse([]byte("Resources:\n  A: &r {Type: AWS::SNS::Topic}\n  B: *r\n"))
	if err != nil || JSON(v) != `{"Resources":{"A":{"Type":"AWS::SNS::Topic"},"B":{"Type":"AWS::SNS::Topic"}}}` {
		t.Errorf("%v %v", JSON(v), err)
	}
}

// FuzzDecodeJSON: DecodeJSON gives what encoding/json gives (UseNumber) for every input
// encoding/json takes, except that it refuses a repeated key, and it refuses what encoding/json
// refuses.
func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{`{"a": [1, 2.5e3, "x\u00e9", true, null, {}]}`, `{"a": 1, "a": 2}`, `[{"k": {"k": 1}}]`,
		`"\ud800"`, `{"a": 1} x`, `{"a":`, "\xff", `-0.0E+1`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := DecodeJSON([]byte(in))
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		var want any
		werr := dec.Decode(&want)
		if werr == nil {
			if _, terr := dec.Token(); terr != io.EOF {
				werr = errors.New("trailing data")
			}
		}
		var se *SyntaxError
		switch {
		case err != nil && !errors.As(err, &se):
			t.Fatalf("%q: untyped error %T", in, err)
		case werr != nil && err == nil:
			t.Fatalf("%q: accepted what encoding/json refuses (%v)", in, werr)
		case werr == nil && err != nil && se.RepeatedKey == "":
			t.Fatalf("%q: refused what encoding/json takes: %v", in, err)
		case err == nil && !reflect.DeepEqual(got, want):
			t.Fatalf("%q: got %#v, want %#v", in, got, want)
		}
	})
}

// Keys are reused within a parse (key): every key must still read as written, past the bound on
// reused keys, with escapes and non-ASCII letters, and equal keys in different objects.
func TestKeysReadAsWrittenWhenReused(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"Resources": {`)
	for i := range maxInterned + 500 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"R%d": {"Type": "T", "Properties": {"Key\u0041": %d, "cl\u00e9": "x", "Ünïcode": [%d], "Name%d": {"Ref": "R%d"}}}`,
			i, i, i, i%7, i)
	}
	b.WriteString(`}, "Ref": {"Type": "AWS::S3::Bucket"}}`)
	got, err := DecodeJSON([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(b.String()))
	dec.UseNumber()
	var want any
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the parse differs from encoding/json's")
	}
}

// A key written twice is refused whichever way each is read (key's reused keys, a key past
// maxInterned, an escaped or non-ASCII key), at the second one's offset, in the right object.
func TestRepeatedKeysRefusedPastReuse(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	for i := range maxInterned + 100 {
		fmt.Fprintf(&many, `"k%d": %d, `, i, i)
	}
	cases := []struct{ doc, key, pointer, second string }{
		{`{"a": 1, "\u0061": 2}`, "a", "/", `"\u0061"`},
		{`{"\u0061": 1, "a": 2}`, "a", "/", `"a": 2`},
		{`{"x": {"é": 1, "\u00e9": 2}}`, "é", "/x", `"\u00e9"`},
		{`{"x": {"a\"b": 1, "a\"b": 2}}`, `a"b`, "/x", `"a\"b": 2`},
		{`{"o": {` + many.String() + `"k0": 0}}`, "k0", "/o", `"k0": 0}`},
		{`{"o": {` + many.String() + fmt.Sprintf(`"k%d": 0}}`, maxInterned+50), fmt.Sprintf("k%d", maxInterned+50), "/o",
			fmt.Sprintf(`"k%d": 0}`, maxInterned+50)},
		{`{"p": {` + many.String() + `"z": 1}, "q": {"k1": 1, "k1": 2}}`, "k1", "/q", `"k1": 2`},
	}
	for _, c := range cases {
		for name, parse := range map[string]func([]byte) (any, error){"ParseJSON": ParseJSON, "DecodeJSON": DecodeJSON} {
			_, err := parse([]byte(c.doc))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("%s %.40q: %v, want the key %q refused", name, c.doc, err, c.key)
				continue
			}
			at := strings.LastIndex(c.doc, c.second)
			line, col := LineCol([]byte(c.doc), int64(at))
			if se.RepeatedKey != c.key || se.Pointer != c.pointer || se.Offset != at || se.Line != line || se.Column != col {
				t.Errorf("%s %.40q: key %q at %s offset %d (%d:%d), want %q at %s offset %d (%d:%d)", name, c.doc,
					se.RepeatedKey, se.Pointer, se.Offset, se.Line, se.Column, c.key, c.pointer, at, line, col)
			}
		}
	}
}

// JSON writes a number as JavaScript prints it, and a YAML number JSON has no form for (.inf,
// .nan, a tagged !!float) as the string it is written as: what JSON writes is always JSON.
func TestJSONWritesEveryNumberAsJSON(t *testing.T) {
	t.Parallel()
	for in, want := range map[Number]string{
		"1.50": "1.5", "1.": "1", "0x1p-2": "0.25", "1e2": "100", "1E+2": "100", "1e999": "1e999", "-1e-7": "-1e-7", "0.1": "0.1",
		"12345678901234567890123": "1.2345678901234568e+22",
		".inf":                    `".inf"`, "-.Inf": `"-.Inf"`, ".nan": `".nan"`, "abc": `"abc"`, "": `""`, "1e": `"1e"`, "-": `"-"`,
	} {
		got := JSON(in)
		if got != want || !json.Valid([]byte(got)) {
			t.Errorf("JSON(Number(%q)) = %s, want %s", string(in), got, want)
		}
	}
}
