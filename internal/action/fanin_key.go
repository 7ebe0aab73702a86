package action

import (
	"fmt"
	"strings"

	"github.com/cdkbot/cdkbot/internal/failure"
)

// maxKey bounds a comment key: it is written into the comment's hidden marker.
const maxKey = 200

// CommentKey is the key a review's comment and check run are found by: the key input when the
// workflow gives one (a hand-written matrix keeps one comment per leg with key: ${{ matrix.x }}),
// else the job's own (workflow/job/working-directory). A key cdkbot would not write is refused.
func CommentKey(input, job string) (string, error) {
	if input == "" {
		return job, nil
	}
	if len(input) > maxKey || strings.ContainsAny(input, "\r\n<>\"`") || strings.Contains(input, "--") {
		return "", failure.Usagef("input key %q: give at most %d characters, one line, without <, >, \", ` or --",
			truncateKey(input), maxKey)
	}
	if strings.HasPrefix(input, deployKeyPrefix) {
		// The merge deploy's own comments are keyed deploy/…: it skips them when it looks for
		// reviews, so a review keyed so would be invisible to it.
		return "", failure.Usagef("input key %q: keys starting with %s are the deploy's own; choose another",
			truncateKey(input), deployKeyPrefix)
	}
	return input, nil
}

func truncateKey(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%s…", s[:60])
	}
	return s
}

// deployKeyPrefix starts the key of the merge deploy's own comments (deploy/ + the review's key).
const deployKeyPrefix = "deploy/"
