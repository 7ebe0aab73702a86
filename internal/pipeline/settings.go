package pipeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ValueKind is how a door shows a setting's value: cobra's type names, so `--help` reads as
// it always has.
type ValueKind string

// Value kinds.
const (
	Text     ValueKind = "string"
	List     ValueKind = "strings" // comma-separated; the action's inputs also take one per line
	Number   ValueKind = "int"
	Duration ValueKind = "duration"
)

// Setting is one option of a pipeline as every door fills it: a flag of `cdkbot review` and of
// the hook, an input of the action. Name is both the flag's and the input's; Set parses a
// value and stores it, so the doors share one parser and one default.
type Setting[O any] struct {
	Name, Default, Usage string
	Kind                 ValueKind
	// Action is true when the action reads it as an input (action.yml declares it).
	Action bool
	Set    func(o *O, value string) error
}

// SplitList splits a list value at commas and line breaks, dropping blanks and spaces.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func text(set func(o *ReviewOptions, v string)) func(*ReviewOptions, string) error {
	return func(o *ReviewOptions, v string) error { set(o, v); return nil }
}

func list(set func(o *ReviewOptions, v []string)) func(*ReviewOptions, string) error {
	return func(o *ReviewOptions, v string) error { set(o, SplitList(v)); return nil }
}

// ReviewSettings are the review's options that every door sets the same way, with one
// default and one parser each. Inputs that only one door has (the CLI's --repo and --base,
// the action's event) stay with that door.
var ReviewSettings = []Setting[ReviewOptions]{
	{Name: "fail-on", Kind: List, Action: true, Default: strings.Join(DefaultFailOn, ","),
		Usage: "gates that fail the review: replace, destroy, orphan, destroy-stateful, security-broadening, compat-fail, " +
			"policy-error, validation-error, drift (with AWS credentials)",
		Set: list(func(o *ReviewOptions, v []string) { o.FailOn = v })},
	{Name: "override-label", Kind: Text, Action: true, Default: DefaultOverrideLabel,
		Usage: "the PR label that turns failing gates into warnings",
		Set:   text(func(o *ReviewOptions, v string) { o.OverrideLabel = v })},
	{Name: "stacks", Kind: List, Action: true,
		Usage: "only stacks whose id, display name or stack name matches this glob (repeatable)",
		Set:   list(func(o *ReviewOptions, v []string) { o.Stacks = v })},
	{Name: "install-command", Kind: Text, Action: true,
		Usage: "install dependencies before synthesizing (default from the lock file; none to skip)",
		Set:   text(func(o *ReviewOptions, v string) { o.InstallCommand = v })},
	{Name: "synth-command", Kind: Text, Action: true,
		Usage: "synthesize the app (default: cdk.json's app, run with CDK_OUTDIR)",
		Set:   text(func(o *ReviewOptions, v string) { o.SynthCommand = v })},
	{Name: "synth-timeout", Kind: Duration, Action: true, Default: "10m0s",
		Usage: "time limit for installing and synthesizing one revision",
		Set: func(o *ReviewOptions, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("give a duration such as 10m or 90s")
			}
			o.SynthTimeout = d
			return nil
		}},
	{Name: "synth-inputs", Kind: List, Action: true,
		Usage: "repository paths the app reads outside its directory (../lambda code, shared config): checked out for " +
			"synthesis and part of its cache key",
		Set: list(func(o *ReviewOptions, v []string) { o.SynthInputs = v })},
	{Name: "context", Kind: List, Action: true,
		Usage: "context given to the app as the CDK CLI's -c, key=value pairs (one environment of an app, as " +
			"cdkbot apps lists them: stage=prod); part of the synthesis cache key",
		Set: func(o *ReviewOptions, v string) error {
			o.Context = nil
			for _, kv := range SplitList(v) {
				k, val, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return fmt.Errorf("give key=value pairs such as stage=prod (got %q)", kv)
				}
				if o.Context == nil {
					o.Context = map[string]string{}
				}
				o.Context[k] = val
			}
			return nil
		}},
	{Name: "synth-concurrency", Kind: Number, Action: true, Default: "2",
		Usage: "revisions synthesized at the same time (base and head side by side)",
		Set: func(o *ReviewOptions, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("give a whole number, 1 or more (2 synthesizes base and head side by side)")
			}
			o.SynthConcurrency = n
			return nil
		}},
	{Name: "synth-user", Kind: Text, Action: true,
		Usage: "install and synthesize as this unprivileged, dedicated user, or as BASE,HEAD (a user each; name, uid or " +
			"uid:gid; cdkbot must run as root or have passwordless sudo), so the app cannot read cdkbot's files, memory " +
			"or tokens; every process of that user is killed afterwards; none runs the app as you (the default here)",
		Set: text(func(o *ReviewOptions, v string) { o.SynthUser = v })},
	{Name: "security-severity", Kind: Text, Action: true, Default: "high",
		Usage: "the least severity of a permission change that triggers security-broadening: low, medium, high or critical",
		Set:   text(func(o *ReviewOptions, v string) { o.SecuritySeverity = v })},
	{Name: "deployed", Kind: Text, Action: true, Default: DeployedAuto,
		Usage: "compare the base with what each stack runs in AWS (read-only, through its lookup role): auto (when AWS " +
			"credentials are configured), off or required",
		Set: text(func(o *ReviewOptions, v string) { o.Deployed = v })},
	{Name: "base-failure", Kind: Text, Action: true, Default: "fail",
		Usage: "when the base fails to synthesize: fail (block: nobody can tell what the change destroys) " +
			"or first-deployment",
		Set: text(func(o *ReviewOptions, v string) { o.BaseFailure = v })},
	// How the review is shown and posted: what to fold, the comment, the labels.
	{Name: "asset-changes", Kind: Text, Action: true, Default: "fold",
		Usage: "resources whose only change is an asset's hash (new Lambda code, new files for a bucket " +
			"deployment, a new image): fold (counted in one line per stack) or show (listed as updates)",
		Set: oneOf([]string{"fold", "show"}, func(o *ReviewOptions, v string) { o.ShowAssetChanges = v == "show" })},
	{Name: "comment", Kind: Text, Action: true, Default: CommentSticky,
		Usage: "how the review is posted on the pull request: sticky (one comment, edited in place), new (a comment " +
			"per run), changes (sticky while the pull request changes something; none when it changes nothing, and " +
			"the sticky one deleted once it no longer does) or off",
		Set: oneOf([]string{CommentSticky, CommentNew, CommentChanges, CommentOff},
			func(o *ReviewOptions, v string) { o.Comment = v })},
	{Name: "result-labels", Kind: Text, Action: true, Default: "off",
		Usage: "on: set and clear the pull request's labels from the verdict (" + strings.Join(ResultLabelNames, ", ") +
			"), so reviews can be filtered and routed; off",
		Set: oneOf([]string{"off", "on"}, func(o *ReviewOptions, v string) { o.ResultLabels = v == "on" })},
}

// How the action posts a review on its pull request (the comment setting).
const (
	CommentSticky  = "sticky"  // one comment, edited in place run after run
	CommentNew     = "new"     // a new comment each run
	CommentChanges = "changes" // sticky, only while the pull request changes something
	CommentOff     = "off"     // no comment: the check run, the job summary and the report file
)

// oneOf is a Text setting's parser for a closed set of words: anything else is refused, saying
// which words there are, and leaves the options untouched.
func oneOf(words []string, set func(o *ReviewOptions, v string)) func(*ReviewOptions, string) error {
	return func(o *ReviewOptions, v string) error {
		for _, w := range words {
			if v == w {
				set(o, v)
				return nil
			}
		}
		return fmt.Errorf("use %s or %s", strings.Join(words[:len(words)-1], ", "), words[len(words)-1])
	}
}

// The labels result-labels sets on a pull request, and clears once they no longer hold.
const (
	LabelBlocked       = "cdkbot:blocked"        // a gate blocks that no approval lifts, or the base is unreadable
	LabelNeedsApproval = "cdkbot:needs-approval" // gates block that an approval lifts
	LabelDestroys      = "cdkbot:destroys"       // resources are destroyed or replaced
	LabelSecurity      = "cdkbot:security"       // permissions broaden
)

// ResultLabelNames are every label result-labels manages.
var ResultLabelNames = []string{LabelBlocked, LabelNeedsApproval, LabelDestroys, LabelSecurity}

// ReviewSetting is the setting named name; it panics for a name not in the table (a
// programming error, caught by the doors' tests).
func ReviewSetting(name string) Setting[ReviewOptions] {
	for _, s := range ReviewSettings {
		if s.Name == name {
			return s
		}
	}
	panic("no review setting " + name)
}

// DefaultReviewOptions are the review's options with every setting at its default.
func DefaultReviewOptions() ReviewOptions {
	var o ReviewOptions
	for _, s := range ReviewSettings {
		if s.Default != "" {
			if err := s.Set(&o, s.Default); err != nil {
				panic("review setting " + s.Name + ": bad default: " + err.Error())
			}
		}
	}
	return o
}
