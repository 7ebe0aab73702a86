package compat

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/cdkbot/cdkbot/internal/semver"
)

// The published cloud assembly schemas, vendored by history/fetch.sh, so a PR's check can name
// the schema changes between its base and head framework versions.
//
//go:embed history/index.tsv history/*.schema.json.gz
var historyFS embed.FS

// PublishedSchema is one published @aws-cdk/cloud-assembly-schema release.
type PublishedSchema struct {
	Package  string // npm package version
	Declared string // the schema version it declares (what manifests carry as "version")
	file     string
}

var loadIndex = sync.OnceValues(func() ([]PublishedSchema, error) {
	raw, err := historyFS.ReadFile("history/index.tsv")
	if err != nil {
		return nil, err
	}
	var out []PublishedSchema
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("history/index.tsv: malformed line %q", line)
		}
		out = append(out, PublishedSchema{Package: f[0], Declared: f[1], file: "history/" + f[2]})
	}
	return out, nil
})

// PublishedSchemas lists the embedded schema history, oldest first.
func PublishedSchemas() []PublishedSchema {
	idx, err := loadIndex()
	if err != nil {
		panic(err) // embedded data, validated by the package tests
	}
	return idx
}

// Load decodes the schema.
func (p PublishedSchema) Load() (any, error) {
	raw, err := historyFS.ReadFile(p.file)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(data, &v)
}

// KnownSchema finds the published schema a manifest version denotes: the latest release that
// declares exactly that version, else none (a version between the embedded releases).
func KnownSchema(version string) (PublishedSchema, bool) {
	want, err := semver.Parse(version)
	if err != nil {
		return PublishedSchema{}, false
	}
	var found PublishedSchema
	ok := false
	for _, p := range PublishedSchemas() {
		if d, err := semver.Parse(p.Declared); err == nil && d.Compare(want) == 0 {
			found, ok = p, true
		}
	}
	return found, ok
}
