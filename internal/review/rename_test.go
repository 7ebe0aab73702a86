package review

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

func template(t *testing.T, resources string) *cfn.Object {
	t.Helper()
	o, err := cfn.Parse([]byte(`{"Resources": {` + resources + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func stackDiff(t *testing.T, id, env, old, new string) *cfndiff.StackDiff {
	t.Helper()
	s := cfndiff.DiffTemplates(id, template(t, old), template(t, new), cfndiff.Options{})
	s.Environment = env
	return s
}

func moveLines(m []Move) string {
	var out []string
	for _, mv := range m {
		out = append(out, fmt.Sprintf("%s %s/%s -> %s/%s %s", mv.Type, mv.From.Stack, mv.From.LogicalID,
			mv.To.Stack, mv.To.LogicalID, mv.From.Impact))
	}
	return strings.Join(out, "\n")
}

// The assemblies the real aws-cdk-lib made (internal/findings/testdata): the head renames the
// Archive bucket's construct. Its retained bucket is orphaned under the old logical id and a new
// one created under the new: a move. The head's new Scratch bucket has other properties: no move.
func TestMovesInARealAssembly(t *testing.T) {
	t.Parallel()
	rep, err := Run(Input{Base: load(t, "../findings/testdata/base"), Head: load(t, "../findings/testdata/head"), ToolSchemaMax: 55})
	if err != nil {
		t.Fatal(err)
	}
	if got := moveLines(rep.Moves); got != "AWS::S3::Bucket Data/ArchiveDA4CB258 -> Data/ArchiveV2D864CA9B orphan" {
		t.Errorf("moves: %q", got)
	}
	if m := rep.Moves[0]; m.From.Path != "/Data/Archive/Resource" || m.To.Path != "/Data/ArchiveV2/Resource" || m.To.Impact != "create" {
		t.Errorf("ends: %+v", m)
	}
}

func TestMoves(t *testing.T) {
	t.Parallel()
	const env, other = "aws://1/eu-west-1", "aws://2/eu-west-1"
	bucket := func(id, name string) string {
		return fmt.Sprintf(`"%s": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "%s", "Tags": [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]}}`, id, name)
	}
	policy := func(id, bucket string) string {
		return fmt.Sprintf(`"%s": {"Type": "AWS::S3::BucketPolicy", "Properties": {"Bucket": {"Ref": "%s"},
			"PolicyDocument": {"Statement": [{"Effect": "Allow", "Resource": [{"Fn::GetAtt": ["%s", "Arn"]}, {"Fn::Sub": "${%s.Arn}/*"}]}]}}}`,
			id, bucket, bucket, bucket)
	}
	for _, c := range []struct {
		name   string
		stacks []*cfndiff.StackDiff
		want   string
	}{
		{"renamed in a stack", []*cfndiff.StackDiff{stackDiff(t, "Data", env, bucket("Old", "logs"), bucket("New", "logs"))},
			"AWS::S3::Bucket Data/Old -> Data/New destroy"},
		{"tags in another order are the same properties", []*cfndiff.StackDiff{stackDiff(t, "Data", env, bucket("Old", "logs"),
			`"New": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "logs", "Tags": [{"Key": "b", "Value": "2"}, {"Key": "a", "Value": "1"}]}}`)},
			"AWS::S3::Bucket Data/Old -> Data/New destroy"},
		{"moved between stacks", []*cfndiff.StackDiff{
			stackDiff(t, "A", env, bucket("Logs", "logs")+`, "Keep": {"Type": "AWS::SNS::Topic"}`, `"Keep": {"Type": "AWS::SNS::Topic"}`),
			stackDiff(t, "B", env, `"Keep": {"Type": "AWS::SNS::Topic"}`, `"Keep": {"Type": "AWS::SNS::Topic"}, `+bucket("LogsMoved", "logs"))},
			"AWS::S3::Bucket A/Logs -> B/LogsMoved destroy"},
		{"not between environments", []*cfndiff.StackDiff{
			stackDiff(t, "A", env, bucket("Logs", "logs"), `"Keep": {"Type": "AWS::SNS::Topic"}`),
			stackDiff(t, "B", other, `"Keep": {"Type": "AWS::SNS::Topic"}`, bucket("LogsMoved", "logs"))},
			""},
		{"other properties", []*cfndiff.StackDiff{stackDiff(t, "Data", env, bucket("Old", "logs"), bucket("New", "logs-2"))}, ""},
		{"other type", []*cfndiff.StackDiff{stackDiff(t, "Data", env, `"Old": {"Type": "AWS::SNS::Topic"}`, `"New": {"Type": "AWS::SQS::Queue"}`)}, ""},
		{"ambiguous: two alike removed, one created", []*cfndiff.StackDiff{stackDiff(t, "Data", env,
			`"T1": {"Type": "AWS::SNS::Topic"}, "T2": {"Type": "AWS::SNS::Topic"}`, `"T3": {"Type": "AWS::SNS::Topic"}`)}, ""},
		{"retained: an orphan", []*cfndiff.StackDiff{stackDiff(t, "Data", env,
			`"Old": {"Type": "AWS::SNS::Topic", "DeletionPolicy": "Retain"}`, `"New": {"Type": "AWS::SNS::Topic"}`)},
			"AWS::SNS::Topic Data/Old -> Data/New orphan"},
		{"a policy follows its moved bucket", []*cfndiff.StackDiff{stackDiff(t, "Data", env,
			bucket("Old", "logs")+", "+policy("OldPolicy", "Old"), bucket("New", "logs")+", "+policy("NewPolicy", "New"))},
			"AWS::S3::Bucket Data/Old -> Data/New destroy\nAWS::S3::BucketPolicy Data/OldPolicy -> Data/NewPolicy destroy"},
		{"a policy of another bucket is no move", []*cfndiff.StackDiff{stackDiff(t, "Data", env,
			bucket("Old", "logs")+", "+policy("OldPolicy", "Old"), bucket("New", "other")+", "+policy("NewPolicy", "New"))},
			""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := moveLines(Moves(c.stacks)); got != c.want {
				t.Errorf("moves:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// The diff comes from the pull request: thousands of removed and created resources of one type
// are compared within a bound, not pair by pair without end.
func TestMovesAreBounded(t *testing.T) {
	t.Parallel()
	var old, new []string
	for i := range 3000 {
		old = append(old, fmt.Sprintf(`"Old%d": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "old-%d"}}`, i, i))
		new = append(new, fmt.Sprintf(`"New%d": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "new-%d"}}`, i, i))
	}
	s := stackDiff(t, "Data", "", strings.Join(old, ","), strings.Join(new, ","))
	start := time.Now()
	if m := Moves([]*cfndiff.StackDiff{s}); len(m) != 0 {
		t.Errorf("moves: %d", len(m))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}
