package config

import (
	"bytes"
	_ "embed"
)

//go:embed cdkbot.schema.json
var schema []byte

// SchemaURL is the schema's $id: where editors can fetch it, e.g. with a first line
// "# yaml-language-server: $schema=<SchemaURL>" in .cdkbot.yml.
const SchemaURL = "https://raw.githubusercontent.com/cdkbot/cdkbot/main/internal/config/cdkbot.schema.json"

// Schema returns the JSON Schema (draft-07) of .cdkbot.yml, with a description on every key
// for editors to show. It agrees with Parse, which the package tests prove on a table of
// documents; the aspect names it lists are checked against internal/aspects' built-ins there.
func Schema() []byte { return bytes.Clone(schema) }
