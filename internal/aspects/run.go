package aspects

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/resourcespec"
)

// Violation is a policy finding on a resource.
type Violation struct {
	Rule       string `json:"rule"`
	Severity   string `json:"severity"`
	Stack      string `json:"stack"`
	Path       string `json:"path"`
	LogicalID  string `json:"logicalId"`
	Message    string `json:"message"`
	Suppressed bool   `json:"suppressed"`
	Reason     string `json:"reason,omitempty"`
	// Existing is true when the base already had this violation: the change did not bring it,
	// so it is shown but does not fail the policy-error gate.
	Existing bool `json:"existing,omitempty"`
}

// Mutation is a change a mutating aspect made to a template.
type Mutation struct {
	Aspect    string `json:"aspect"`
	Stack     string `json:"stack"`
	Path      string `json:"path"`
	LogicalID string `json:"logicalId"`
	Change    string `json:"change"`
}

// Report is what a policy run found and changed.
type Report struct {
	Violations []Violation `json:"violations"`
	Mutations  []Mutation  `json:"mutations"`
	Passes     int         `json:"passes"`
	Warnings   []string    `json:"warnings,omitempty"`
}

// Failed reports whether an unsuppressed error-level violation remains.
func (r *Report) Failed() bool {
	for _, v := range r.Violations {
		if v.Severity == "error" && !v.Suppressed {
			return true
		}
	}
	return false
}

type runContext struct {
	cfg        *Config
	spec       *resourcespec.Spec
	violations []Violation
	mutations  []Mutation
	errs       []error
}

// configured is one built-in as configured: it visits resource nodes in its scope.
type configured struct {
	name     string
	b        builtin
	opts     any
	scope    string
	severity string
	rc       *runContext
}

func (c *configured) Name() string { return c.name }

func (c *configured) Visit(n *Node) error {
	if n.Resource == nil || (c.scope != "" && !MatchPath(c.scope, n.Path)) {
		return nil
	}
	for _, msg := range c.b.visit(c.rc, c.opts, n) {
		stack := ""
		if n.Stack != nil {
			stack = n.Stack.ID
		}
		if c.b.mutating {
			c.rc.mutations = append(c.rc.mutations,
				Mutation{Aspect: c.name, Stack: stack, Path: n.Path, LogicalID: n.LogicalID, Change: msg})
			continue
		}
		v := Violation{Rule: c.name, Severity: c.severity, Stack: stack, Path: n.Path, LogicalID: n.LogicalID, Message: msg}
		v.Suppressed, v.Reason = c.rc.suppressed(c.name, n)
		c.rc.violations = append(c.rc.violations, v)
	}
	return errors.Join(c.rc.errs...)
}

// suppressed finds a suppression for rule on n: in the configuration (rule + path glob) or in
// the resource's Metadata ({"cdkbot": {"suppress": [{"rule", "reason"}]}}).
func (rc *runContext) suppressed(rule string, n *Node) (bool, string) {
	for _, s := range rc.cfg.Suppress {
		if s.Rule == rule && (s.Path == "" || MatchPath(s.Path, n.Path)) {
			return true, s.Reason
		}
	}
	for _, s := range asList(get(get(get(n.Resource, "Metadata"), "cdkbot"), "suppress")) {
		if get(s, "rule") == rule {
			if reason, ok := get(s, "reason").(string); ok && reason != "" {
				return true, reason
			}
		}
	}
	return false, ""
}

// Run applies the configured aspects to the app at the root, in priority order, and reports.
// With no aspects configured it changes nothing.
func Run(app *App, cfg *Config, spec *resourcespec.Spec) (*Report, error) {
	if spec == nil {
		spec = resourcespec.Default()
	}
	rc := &runContext{cfg: cfg, spec: spec}
	for i, ac := range cfg.Aspects {
		b, ok := builtins[ac.Use]
		if !ok {
			return nil, fmt.Errorf("aspects[%d]: unknown aspect %q; known aspects: %s",
				i, ac.Use, strings.Join(builtinNames(), ", "))
		}
		opts, err := b.options("", ac.With)
		if err != nil {
			return nil, fmt.Errorf("aspects[%d] (%s): %w", i, ac.Use, err)
		}
		priority := PriorityReadonly
		if b.mutating {
			priority = PriorityMutating
		}
		if ac.Priority != nil {
			priority = *ac.Priority
		}
		severity := ac.Severity
		if severity == "" {
			severity = "error"
		}
		aspect := &configured{name: ac.Use, b: b, opts: opts, scope: ac.Scope, severity: severity, rc: rc}
		if _, err := Of(app.Root).Add(aspect, priority); err != nil {
			return nil, err
		}
	}
	res, err := Invoke(app.Root, Options{SinglePass: !cfg.Stabilizing()})
	if err != nil {
		return nil, err
	}
	rep := &Report{Violations: rc.violations, Mutations: rc.mutations, Passes: res.Passes, Warnings: res.Warnings}
	if rep.Violations == nil {
		rep.Violations = []Violation{}
	}
	if rep.Mutations == nil {
		rep.Mutations = []Mutation{}
	}
	sort.SliceStable(rep.Violations, func(i, j int) bool {
		a, b := rep.Violations[i], rep.Violations[j]
		return a.Stack+"\x00"+a.Path+"\x00"+a.Rule < b.Stack+"\x00"+b.Path+"\x00"+b.Rule
	})
	return rep, nil
}

// ChangedTemplates returns the templates mutations changed, by stack id.
func (a *App) ChangedTemplates() map[string]*cfn.Object {
	out := map[string]*cfn.Object{}
	for _, s := range a.Stacks {
		if s.Changed {
			out[s.ID] = s.Template
		}
	}
	return out
}
