package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/review"
)

// ReviewJSON writes the diff in place stack by stack instead of embedding a whole document:
// the bytes must be those of the review encoded whole, diff included, hostile strings and all.
func TestReviewJSONIsTheWholeDocument(t *testing.T) {
	t.Parallel()
	demo, err := review.Run(review.Input{Base: loadAssembly(t, "../cli/demo/before"), Head: loadAssembly(t, "../cli/demo/after"),
		ToolSchemaMax: 55})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*review.Report{"demo": demo, "hostile": hostileReport(t), "empty": {}} {
		var diff, want, got bytes.Buffer
		if err := DiffJSON(&diff, DiffReport{Stacks: r.Stacks}); err != nil {
			t.Fatal(err)
		}
		whole := struct {
			*review.Report
			Failed bool            `json:"failed"`
			Diff   json.RawMessage `json:"diff"`
		}{r, r.Failed(), json.RawMessage(bytes.TrimSpace(diff.Bytes()))}
		if err := encodeJSON(&want, whole, "", false); err != nil {
			t.Fatal(err)
		}
		if err := ReviewJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: ReviewJSON differs from the whole document:\n got %.300s\nwant %.300s", name, got.String(), want.String())
		}
	}
}

// A YAML template may hold numbers JSON has none for (.inf, .nan, a tagged !!float): the JSON
// views still write a document. ReviewJSON writes its envelope before the diff, so a value the
// diff could not encode left half a document on stdout (exit 4); DiffJSON failed outright.
func TestJSONViewsWriteNumbersJSONHasNot(t *testing.T) {
	t.Parallel()
	parse := func(yaml string) *cfn.Object {
		o, err := cfn.Parse([]byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	old := parse("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      VisibilityTimeout: 30\n")
	new := parse("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      VisibilityTimeout: .inf\n" +
		"      DelaySeconds: -.Inf\n      MaximumMessageSize: .nan\n      Tags: [{Key: k, Value: !!float abc}]\n")
	r := &review.Report{Stacks: []*cfndiff.StackDiff{cfndiff.DiffTemplates("Queue", old, new, cfndiff.Options{})}}
	var diff, rev bytes.Buffer
	if err := DiffJSON(&diff, DiffReport{Stacks: r.Stacks}); err != nil {
		t.Errorf("DiffJSON: %v", err)
	}
	if err := ReviewJSON(&rev, r); err != nil {
		t.Errorf("ReviewJSON: %v", err)
	}
	for name, b := range map[string][]byte{"DiffJSON": diff.Bytes(), "ReviewJSON": rev.Bytes()} {
		if !json.Valid(b) {
			t.Errorf("%s wrote no JSON document: %.300s", name, b)
		}
		if !bytes.Contains(b, []byte(`"new":".inf"`)) {
			t.Errorf("%s: the new VisibilityTimeout is not shown as written: %.600s", name, b)
		}
	}
}
