package cfndiff

import (
	"fmt"
	"strings"
	"testing"
)

// A resource whose name property is set cannot be replaced: CloudFormation refuses ("cannot update
// a stack when a custom-named resource requires replacing"), and until it is renamed its name and
// ARN stay, so what reads them does not resolve anew.
func TestCustomNamedReplacementIsRefused(t *testing.T) {
	t.Parallel()
	mk := func(nameProp, key string) string {
		return fmt.Sprintf(`{"Resources": {
		  "Table": {"Type": "AWS::DynamoDB::Table", "Properties": {%s
		    "KeySchema": [{"AttributeName": %q, "KeyType": "HASH"}],
		    "AttributeDefinitions": [{"AttributeName": %q, "AttributeType": "S"}]}},
		  "Reader": {"Type": "AWS::Lambda::Function", "Properties": {"Role": "r", "Code": {"ZipFile": "x"},
		    "Environment": {"Variables": {"TABLE": {"Ref": "Table"}, "ARN": {"Fn::GetAtt": ["Table", "Arn"]}}}}}}}`,
			nameProp, key, key)
	}
	cases := []struct {
		name          string
		oldName       string
		newName       string
		refused       string // RefusedName
		readerTouched bool
	}{
		{"named, name kept", `"TableName": "orders",`, `"TableName": "orders",`, "TableName", false},
		{"unnamed", ``, ``, "", true},
		{"renamed", `"TableName": "orders",`, `"TableName": "orders-v2",`, "", true},
		{"name removed", `"TableName": "orders",`, ``, "", true},
		{"name added", ``, `"TableName": "orders",`, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := Diff(tpl(t, mk(c.oldName, "id")), tpl(t, mk(c.newName, "pk")), Options{})
			table := findResource(d, "Table")
			if table.Impact != Replace {
				t.Fatalf("Table: %s, want replace", table.Impact)
			}
			if table.RefusedName != c.refused {
				t.Errorf("Table.RefusedName = %q, want %q", table.RefusedName, c.refused)
			}
			refusal := strings.Contains(table.Consequence(), "CloudFormation will refuse this update")
			if refusal != (c.refused != "") {
				t.Errorf("Table.Consequence() = %q", table.Consequence())
			}
			reader := findResource(d, "Reader")
			touched := reader != nil && reader.Property("Environment") != nil
			if touched != c.readerTouched {
				t.Errorf("Reader resolves anew: %v, want %v (%+v)", touched, c.readerTouched, reader)
			}
		})
	}
}

// A name that reads a replaced resource changes with it, so the replacement can happen.
func TestCustomNameReadingAReplacedResourceIsNotRefused(t *testing.T) {
	t.Parallel()
	mk := func(bucket string) string {
		return fmt.Sprintf(`{"Resources": {
		  "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": %q}},
		  "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Fn::Sub": "${Bucket}-q"}}}}}`, bucket)
	}
	d := Diff(tpl(t, mk("a")), tpl(t, mk("b")), Options{})
	if q := findResource(d, "Queue"); q.Impact != Replace || q.RefusedName != "" {
		t.Errorf("Queue: %s refused %q, want a replacement that happens", q.Impact, q.RefusedName)
	}
}
