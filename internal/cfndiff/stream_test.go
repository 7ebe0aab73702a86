package cfndiff

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

// Stack by stack, the diff is the one DiffAssemblies returns with templates released: the same
// stacks in the same order, the blast radius through exports and nested outputs, exports in use.
func TestDiffAssembliesEachEqualsDiffAssemblies(t *testing.T) {
	t.Parallel()
	load := func(fixture string) *assembly.Assembly {
		a, err := assembly.Load(os.DirFS(filepath.Join("../../compat-fixtures", fixture)), fixture)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, c := range []struct{ name, fixture, file, old, new string }{
		{"exports", "aws-cdk-lib@2.276.0/deploy-graph", "Data.template.json",
			`"TopicName": "graph-data"`, `"TopicName": "graph-data-v2"`},
		{"legacy exports", "aws-cdk-core@1.204.0/deploy-graph", "graph-data.template.json",
			`"TopicName": "graph-data"`, `"TopicName": "graph-data-v2"`},
		{"nested outputs", "aws-cdk-lib@2.276.0/stage-nested",
			"assembly-Prod/ProdApiStorageDD1EDF8B.nested.template.json", `"AttributeName": "pk"`, `"AttributeName": "id"`},
		{"versions", "aws-cdk-lib@2.276.0/deploy-graph", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := load(c.fixture)
			head := load(c.fixture)
			if c.file != "" {
				head = edited(t, c.fixture, c.file, c.old, c.new)
			} else {
				base = load("aws-cdk-core@1.204.0/deploy-graph")
			}
			want, err := DiffAssemblies(base, head, nil, Options{ReleaseTemplates: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []*StackDiff
			if err := DiffAssembliesEach(base, head, nil, Options{}, func(sd *StackDiff) error {
				got = append(got, sd)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d stacks, want %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("stack %d: %s differs from DiffAssemblies' %s", i, got[i].ID, want[i].ID)
				}
			}
		})
	}
}

// An error from emit stops the walk: no stack is handed over after it.
func TestDiffAssembliesEachStopsAtTheFirstError(t *testing.T) {
	t.Parallel()
	fixture := "aws-cdk-lib@2.276.0/deploy-graph"
	a, err := assembly.Load(os.DirFS(filepath.Join("../../compat-fixtures", fixture)), fixture)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	err = DiffAssembliesEach(nil, a, nil, Options{}, func(*StackDiff) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("err %v after %d stacks", err, n)
	}
}

// A template is left out of the pass across stacks only when its text cannot name an import or
// an export, escapes included.
func TestMentionsCross(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		want bool
	}{
		{`{"Resources": {"T": {"Type": "AWS::SNS::Topic", "Properties": {"DisplayName": "a\nb"}}}}`, false},
		{`{"Resources": {"P": {"Properties": {"Value": {"Fn::ImportValue": "x"}}}}}`, true},
		{`{"Resources": {"P": {"Properties": {"Value": {"Fn::Import\u0056alue": "x"}}}}}`, true},
		{`{"Outputs": {"O": {"Value": "v", "Export": {"Name": "x"}}}}`, true},
		{"Resources:\n  P:\n    Properties:\n      Value: !ImportValue x\n", true},
		{"Resources:\n  P:\n    Properties:\n      Value: {\"Fn::Imp\\x6frtValue\": x}\n", true},
		{"Resources:\n  T:\n    Type: AWS::SNS::Topic\n", false},
		{"", false}, // not a template: the diff says so
	} {
		if got := mentionsCross([]byte(c.text)); got != c.want {
			t.Errorf("%q: %v", c.text, got)
		}
	}
}
