// Package pullrequest holds what cdkbot knows about a pull request, once for every layer: the
// Actions runtime parses it from an event, the GitHub client reads it from the API, and the
// action's flows review, approve and deploy by it. Defining it below all three lets the facts
// cross from one to the next as they are, instead of being copied field by field between
// twin types.
package pullrequest

// Facts is what cdkbot needs from a pull request.
type Facts struct {
	Number           int
	Author           string
	HeadSHA, BaseSHA string
	// MergeCommitSHA is GitHub's merge_commit_sha: while the pull request is open, its test merge
	// commit (refs/pull/N/merge), "" while GitHub has not computed it; once merged, the commit
	// the merge made. Read from the API, it stands only while GitHub also calls the pull request
	// mergeable.
	MergeCommitSHA string
	Labels         []string
	// Fork is true when the head repository is not the base repository: its token cannot write.
	Fork bool
}
