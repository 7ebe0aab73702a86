// Package commitid abbreviates git commit ids for people to read. It exists so every layer that
// names a commit (the renderer, the adapters, the flows, the entry points) abbreviates it the
// same way, with one function, instead of each keeping its own.
package commitid

// Lengths an abbreviation takes.
const (
	// GitHub is as many characters as GitHub shows, so an id reads the same beside GitHub's own.
	GitHub = 7
	// Unambiguous stays unique in a large repository, for an id a reader may paste into git.
	Unambiguous = 12
)

// Short is sha's first n characters, or all of sha when it is no longer.
func Short(sha string, n int) string {
	if len(sha) > n {
		return sha[:n]
	}
	return sha
}
