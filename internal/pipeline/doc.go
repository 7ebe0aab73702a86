// Package pipeline holds the work every door of cdkbot shares: the review (revisions read from
// git, synthesized in a sandbox with a cache, the assemblies, what runs in AWS, then the review
// use case) and the deploy (publish, change sets in dependency order, outputs), with the smaller
// use cases beside them (publish, plan, check, diff, compat, the demo). `cdkbot review`, the
// pre-push hook and the action's reviewer enter at Review; `cdkbot deploy` and the merge flow at
// Deploy. Options are plain structs (ReviewSettings is the one table the flags and the action's
// inputs fill), ctx is a parameter, errors carry a failure.Kind, and views are handed in as
// callbacks, so the package knows nothing of cobra, environment variables or terminals.
//
// It exists so that the most security-sensitive code (running a pull request's app) lives once,
// below the entry points, and a new door (another CI system, a chat bot) reuses it whole.
package pipeline
