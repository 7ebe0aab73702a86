package resourcespec

import (
	_ "embed"
	"strings"
	"sync"
)

//go:embed names.tsv
var namesTSV string

var loadNames = sync.OnceValue(func() map[string]string { return parseNames(namesTSV) })

// NameProperty is the property that gives a resource of the type a custom physical name
// (TableName, BucketName, ...), or "" when names.tsv lists none. CloudFormation cannot replace a
// resource whose name property is set: the new resource would need the old one's name.
func NameProperty(typeName string) string { return loadNames()[typeName] }

// NameProperties lists every (type, name property) pair, for tests.
func NameProperties() map[string]string { return parseNames(namesTSV) }

func parseNames(data string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(data, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if t, p, ok := strings.Cut(line, "\t"); ok {
			out[t] = p
		}
	}
	return out
}
