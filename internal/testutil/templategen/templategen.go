// Package templategen generates large template pairs for benchmarks and for the side-by-side
// comparison with the reference diff (scripts/benchdiff): chains of resources where each one
// names itself after the previous one through Fn::Sub (an immutable property), so renaming a
// chain's root replaces the whole chain; plus mutable edits and tag changes.
package templategen

import (
	"encoding/json"
	"fmt"
)

// ChainLength is how many resources hang off each root.
const ChainLength = 10

// Pair returns an old and a new template of n resources (JSON). Every chain's root bucket is
// renamed, so every resource of the template is replaced or updated through references.
func Pair(n int) (old, new []byte) {
	return template(n, "a"), template(n, "b")
}

func template(n int, version string) []byte {
	resources := make(map[string]any, n)
	for i := 0; i < n; i++ {
		chain, pos := i/ChainLength, i%ChainLength
		id := fmt.Sprintf("C%04dR%02d", chain, pos)
		if pos == 0 {
			resources[id] = map[string]any{"Type": "AWS::S3::Bucket", "Properties": map[string]any{
				"BucketName": fmt.Sprintf("bucket-%d-%s", chain, version),
				"Tags":       []any{map[string]any{"Key": "chain", "Value": fmt.Sprint(chain)}},
			}}
			continue
		}
		prev := fmt.Sprintf("C%04dR%02d", chain, pos-1)
		props := map[string]any{"Type": "String",
			"Name":  map[string]any{"Fn::Sub": "${" + prev + "}-" + fmt.Sprint(pos)},
			"Value": map[string]any{"Fn::Join": []any{"", []any{"value-", map[string]any{"Ref": prev}}}}}
		if pos%3 == 0 {
			props["Description"] = "generated " + version
		}
		resources[id] = map[string]any{"Type": "AWS::SSM::Parameter", "Properties": props}
	}
	out, _ := json.Marshal(map[string]any{"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources})
	return out
}
