package assembly

import (
	"fmt"
	"strings"
)

// Error reports assembly content that cdkbot cannot accept: malformed JSON, a schema violation,
// a missing or unsafe file, a broken dependency. It names the file and, where there is one, the
// JSON pointer of the offending field, so the user can find it without guessing.
type Error struct {
	File   string  // path of the offending file as the user gave it (root-relative when no root was named)
	Issues []Issue // at least one
	Hint   string  // what to do next; may be empty
	Err    error   // underlying cause, if any
}

// Issue is one problem inside a file.
type Issue struct {
	Pointer string // JSON pointer ("/artifacts/App/properties/templateFile"), or "line 3, column 7", or ""
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch len(e.Issues) {
	case 0:
	case 1:
		b.WriteString(": ")
		writeIssue(&b, e.Issues[0])
	default:
		fmt.Fprintf(&b, ": %d problems:", len(e.Issues))
		for _, is := range e.Issues {
			b.WriteString("\n  - ")
			writeIssue(&b, is)
		}
	}
	if e.Hint != "" {
		b.WriteString("\n")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func writeIssue(b *strings.Builder, is Issue) {
	if is.Pointer != "" {
		b.WriteString(is.Pointer)
		b.WriteString(": ")
	}
	b.WriteString(is.Message)
}

func (e *Error) Unwrap() error { return e.Err }

func newError(file, pointer, hint, format string, args ...any) *Error {
	return &Error{File: file, Issues: []Issue{{Pointer: pointer, Message: fmt.Sprintf(format, args...)}}, Hint: hint}
}

// TooNewError says the assembly was written with a cloud assembly schema whose major version is
// newer than the one this cdkbot was built with. Reading it anyway could silently misread fields,
// so loading stops and the user is told to upgrade cdkbot.
type TooNewError struct {
	File          string    // the manifest.json that declared the version
	Assembly      string    // the assembly directory as the user named it
	SchemaVersion string    // the manifest's "version"
	Framework     Framework // best effort; zero when unknown
	SupportedMax  int       // newest schema major this build reads
}

func (e *TooNewError) Error() string { return e.Message("") }

// Message renders the error with the tool's version, which this package does not know.
func (e *TooNewError) Message(toolVersion string) string {
	tool := "this cdkbot"
	if toolVersion != "" {
		tool = "cdkbot " + toolVersion
	}
	fw := ""
	if e.Framework.Name != "" {
		fw = fmt.Sprintf(" (%s)", e.Framework)
	}
	return fmt.Sprintf("%s was synthesized with cloud assembly schema %s%s; %s reads schema up to %d.x. "+
		"Upgrade cdkbot to a release that reads schema %s, "+
		"or pin the framework to a version that writes schema %d.x or older.",
		e.Assembly, e.SchemaVersion, fw, tool, e.SupportedMax, e.SchemaVersion, e.SupportedMax)
}
