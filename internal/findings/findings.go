// Package findings reads what a CDK app said about itself while it synthesized: the policy
// validation report aws-cdk-lib writes into the assembly (validation-report.json: the built-in
// template validation and the app's validation plugins, RFC 477) and the warning and info
// annotations on its constructs (Annotations.of(...).addWarning, cdk-nag). Error annotations are
// not findings here: they make the assembly incomplete, which the review's gate says.
//
// It exists because these findings were written for the person deploying and were lost on the
// way to the pull request: a review carries them, marks those the base did not have, and can
// gate on new validation errors. Everything in a finding is the app's text: views escape it.
package findings

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

// Severity is how bad a finding is, as the app rated it.
type Severity uint8

// Severities, from least to worst. A plugin's own severity names ("custom") count as warnings
// and keep their name in Finding.Custom.
const (
	Info Severity = iota
	Warning
	Error
	Fatal
)

var severityNames = [...]string{"info", "warning", "error", "fatal"}

func (s Severity) String() string { return severityNames[s] }

// Symbol is a one-character marker for terminals.
func (s Severity) Symbol() string { return [...]string{"i", "!", "✗", "✗"}[s] }

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Blocks is true for errors and fatal findings: what the validation-error gate counts.
func (s Severity) Blocks() bool { return s >= Error }

// Source says where a finding comes from.
type Source uint8

// Sources.
const (
	Annotation Source = iota // a construct's metadata in the manifest (aws:cdk:warning, aws:cdk:info)
	Validation               // validation-report.json
)

func (s Source) String() string { return [...]string{"annotation", "validation"}[s] }

// MarshalText writes the source's name.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Status compares a finding of the head with the base.
type Status uint8

// Statuses.
const (
	New         Status = iota // the base had no such finding (or there is no base)
	Existing                  // the base had the same finding: not the change's doing
	NotCompared               // the base was synthesized without the plugin that found it
)

func (s Status) String() string { return [...]string{"new", "existing", "not-compared"}[s] }

// MarshalText writes the status's name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Finding is one thing the app reported about one construct.
type Finding struct {
	Source   Source   `json:"source"`
	Plugin   string   `json:"plugin,omitempty"` // the validation plugin that reported it
	Rule     string   `json:"rule,omitempty"`
	Severity Severity `json:"severity"`
	Custom   string   `json:"customSeverity,omitempty"` // a plugin's own severity name
	// Stack is the qualified id of the stack the construct is in, when known.
	Stack     string `json:"stack,omitempty"`
	Path      string `json:"path,omitempty"` // construct path, without a leading slash
	LogicalID string `json:"logicalId,omitempty"`
	Message   string `json:"message"`
	Fix       string `json:"fix,omitempty"`
	Status    Status `json:"status"`
}

// key identifies a finding across base and head: the same rule on the same construct saying
// the same thing.
func (f Finding) key() [5]string {
	return [5]string{f.Source.String() + f.Plugin, f.Rule, f.Severity.String(), f.Path, f.Message}
}

// Report is every finding of one assembly.
type Report struct {
	Findings []Finding `json:"findings,omitempty"`
	// Plugins are the validation plugins that reported (aws-cdk-lib writes a plugin's report
	// only when it found something or failed).
	Plugins []string `json:"plugins,omitempty"`
	// Suppressed counts violations the app acknowledged (aws-cdk-lib's suppressedViolations).
	Suppressed int `json:"suppressed,omitempty"`
	// Failures are plugins that failed to run, with why: their rules were not checked.
	Failures []string `json:"failures,omitempty"`
	// Omitted counts findings past MaxFindings, read but not kept.
	Omitted int `json:"omitted,omitempty"`
	// Problem says why validation-report.json could not be read ("" when it could, or is absent).
	Problem string `json:"problem,omitempty"`
}

// MaxFindings bounds the findings a report keeps; MaxText bounds each text of a finding, in
// bytes. A report is the app's output: its size is not the app author's promise.
const (
	MaxFindings = 5000
	MaxText     = 2000
)

// TemplateValidator is the plugin name of aws-cdk-lib's built-in template validation, which
// cdkbot turns off for the base (CDK_VALIDATION=false): its findings cannot be compared.
const TemplateValidator = "CloudFormation Validate"

// Count is the number of findings of a severity, and how many of them are new.
type Count struct{ All, New int }

// Counts are the findings by severity.
func (r *Report) Counts() map[Severity]Count {
	out := map[Severity]Count{}
	if r == nil {
		return out
	}
	for _, f := range r.Findings {
		c := out[f.Severity]
		c.All++
		if f.Status == New {
			c.New++
		}
		out[f.Severity] = c
	}
	return out
}

// Empty is true when there is nothing to show: no finding, failure or problem.
func (r *Report) Empty() bool {
	return r == nil || len(r.Findings) == 0 && len(r.Failures) == 0 && r.Problem == "" && r.Suppressed == 0
}

// Read collects the findings of an assembly: the warning and info annotations of every stack,
// and validation-report.json at the assembly's root, where aws-cdk-lib writes the report of
// every Stage. The report is always returned; the error, an *assembly.Error naming the file and
// the field, says why validation-report.json could not be read (its findings are then missing
// and Problem says so).
func Read(a *assembly.Assembly) (*Report, error) {
	r := &Report{}
	for _, s := range a.AllStacks() {
		for _, m := range s.Messages() {
			sev, ok := map[string]Severity{"info": Info, "warning": Warning}[m.Level]
			if !ok {
				continue // errors make the assembly incomplete: the incomplete gate names them
			}
			text, rule := splitAck(m.Text)
			r.add(Finding{Source: Annotation, Rule: rule, Severity: sev, Stack: s.QualifiedID(),
				Path: strings.TrimPrefix(m.Path, "/"), Message: text})
		}
	}
	err := readValidation(a, r)
	if err != nil {
		r.Problem = err.Error()
	}
	r.sort()
	return r, err
}

func (r *Report) add(f Finding) {
	if len(r.Findings) >= MaxFindings {
		r.Omitted++
		return
	}
	for _, s := range []*string{&f.Plugin, &f.Rule, &f.Custom, &f.Stack, &f.Path, &f.LogicalID, &f.Message, &f.Fix} {
		*s = bound(*s)
	}
	r.Findings = append(r.Findings, f)
}

func (r *Report) sort() {
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(a.Stack, b.Stack), cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Source, b.Source), cmp.Compare(a.Plugin, b.Plugin), cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Message, b.Message))
	})
	r.Findings = slices.CompactFunc(r.Findings, func(a, b Finding) bool { return a == b })
	slices.Sort(r.Plugins)
	r.Plugins = slices.Compact(r.Plugins)
}

// bound cuts s to MaxText bytes at a rune boundary.
func bound(s string) string {
	if len(s) <= MaxText {
		return s
	}
	cut := MaxText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// splitAck takes the rule id off an annotation written with addWarningV2 ("text [ack: ID]"),
// as aws-cdk-lib's own annotation report does; cdk-nag's "(ns::Rule)" suffix is an id too.
func splitAck(s string) (text, rule string) {
	if i := strings.LastIndex(s, "[ack: "); i >= 0 && strings.HasSuffix(s, "]") {
		return strings.TrimSpace(s[:i]), strings.TrimSuffix(s[i+len("[ack: "):], "]")
	}
	if i := strings.LastIndex(s, "("); i >= 0 && strings.HasSuffix(s, ")") &&
		strings.Contains(s[i:], "::") && !strings.ContainsAny(s[i+1:len(s)-1], "() ") {
		return strings.TrimSpace(s[:i]), s[i+1 : len(s)-1]
	}
	return s, ""
}

// Compare marks each finding of head as new, existing (the base had it) or not compared (the
// base was synthesized without the template validator that found it). base nil is no base:
// everything is new.
func Compare(head, base *Report) {
	if head == nil {
		return
	}
	seen := map[[5]string]bool{}
	baseRan := map[string]bool{}
	if base != nil {
		for _, f := range base.Findings {
			seen[f.key()] = true
		}
		for _, p := range base.Plugins {
			baseRan[p] = true
		}
	}
	for i, f := range head.Findings {
		switch {
		case seen[f.key()]:
			head.Findings[i].Status = Existing
		case base != nil && f.Source == Validation && f.Plugin == TemplateValidator && !baseRan[f.Plugin]:
			head.Findings[i].Status = NotCompared
		default:
			head.Findings[i].Status = New
		}
	}
}
