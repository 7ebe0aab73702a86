// Package render turns cdkbot's models into what people and machines read: terminal text,
// GitHub Markdown and JSON. Views are pure functions of a model writing to an io.Writer, so the
// same report renders identically in a terminal, a PR comment and a golden file.
package render
