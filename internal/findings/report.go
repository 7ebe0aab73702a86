package findings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

// The files aws-cdk-lib writes at the root of an assembly: ReportFile since the report became
// part of the cloud assembly schema (@aws-cdk/cloud-assembly-schema's PolicyValidationReportJson),
// LegacyReportFile before that (written when the app set @aws-cdk/core:validationReportJson), and
// still beside ReportFile when it does.
const (
	ReportFile       = "validation-report.json"
	LegacyReportFile = "policy-validation-report.json"
)

// annotationsPlugin is the report aws-cdk-lib makes of the app's annotations (feature flag
// @aws-cdk/core:annotationsInValidationReport): the manifest has the same annotations, read
// with their stacks, so the report's copy is skipped.
const annotationsPlugin = "Construct Annotations"

const reportHint = "The findings of this report are not shown. Synthesize the app again with the aws-cdk-lib " +
	"version that wrote it; if it still fails, the report was changed after synthesis."

// MaxReportSize bounds the report cdkbot decodes (the assembly's own bound is for templates and
// manifests): MaxFindings findings with their texts fit in it many times over.
const MaxReportSize = 16 << 20

// maxIssues bounds the problems one report produces: the first ones say enough.
const maxIssues = 10

func readValidation(a *assembly.Assembly, r *Report) error {
	name, legacy := ReportFile, false
	b, err := a.ReadFile(name, MaxReportSize)
	if errors.Is(err, fs.ErrNotExist) {
		name, legacy = LegacyReportFile, true
		if b, err = a.ReadFile(name, MaxReportSize); errors.Is(err, fs.ErrNotExist) {
			return nil // no plugin ran, or none found anything
		}
	}
	if err != nil {
		return &assembly.Error{File: name, Issues: []assembly.Issue{{Message: err.Error()}}, Hint: reportHint, Err: err}
	}
	v, err := decode(b)
	if err != nil {
		return &assembly.Error{File: name, Issues: []assembly.Issue{{Pointer: position(b, err),
			Message: "not valid JSON: " + err.Error()}}, Hint: reportHint, Err: err}
	}
	w := &walker{stacks: indexStacks(a)}
	top := w.object(v, "")
	if legacy {
		w.legacyReport(top, r)
	} else {
		w.report(top, r)
	}
	if len(w.issues) > 0 {
		return &assembly.Error{File: name, Issues: w.issues, Hint: reportHint}
	}
	return nil
}

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	rest := b[d.InputOffset():]
	if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 {
		return nil, &extraValue{offset: int64(len(b)-len(trimmed)) + 1}
	}
	return v, nil
}

// extraValue is JSON after the report's object, which a JSON reader would silently drop.
type extraValue struct{ offset int64 }

func (e *extraValue) Error() string { return "more than one JSON value" }

// position names where a syntax error is, as line and column.
func position(b []byte, err error) string {
	var offset int64
	var se *json.SyntaxError
	var ev *extraValue
	switch {
	case errors.As(err, &se):
		offset = se.Offset
	case errors.As(err, &ev):
		offset = ev.offset
	}
	if offset <= 0 || offset > int64(len(b)) {
		return ""
	}
	before := b[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n') - 1
	return fmt.Sprintf("line %d, column %d", line, col)
}

// walker reads the decoded report, recording what is wrong with a JSON pointer each.
type walker struct {
	stacks stackIndex
	issues []assembly.Issue
}

func (w *walker) fail(ptr, format string, args ...any) {
	if len(w.issues) < maxIssues {
		w.issues = append(w.issues, assembly.Issue{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

func (w *walker) object(v any, ptr string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		w.fail(ptrOrRoot(ptr), "want an object, found %s", kind(v))
	}
	return m
}

func ptrOrRoot(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

func (w *walker) array(m map[string]any, key, ptr string, required bool) []any {
	v, ok := m[key]
	if !ok || v == nil && !required {
		if required && m != nil {
			w.fail(ptrOrRoot(ptr), "%q is missing", key)
		}
		return nil
	}
	a, ok := v.([]any)
	if !ok {
		w.fail(ptr+"/"+key, "want an array, found %s", kind(v))
	}
	return a
}

func (w *walker) str(m map[string]any, key, ptr string, required bool) string {
	v, ok := m[key]
	if !ok || v == nil && !required {
		if required && m != nil {
			w.fail(ptrOrRoot(ptr), "%q is missing", key)
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		w.fail(ptr+"/"+key, "want a string, found %s", kind(v))
	}
	return s
}

func (w *walker) child(m map[string]any, key, ptr string) map[string]any {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	return w.object(v, ptr+"/"+key)
}

// report reads the schema's PolicyValidationReportJson.
func (w *walker) report(top map[string]any, r *Report) {
	for i, pv := range w.array(top, "pluginReports", "", true) {
		ptr := "/pluginReports/" + strconv.Itoa(i)
		p := w.object(pv, ptr)
		if p == nil {
			continue
		}
		name := w.str(p, "pluginName", ptr, true)
		meta := w.child(p, "metadata", ptr)
		if name == annotationsPlugin || meta["cdk:annotations"] == "true" {
			continue
		}
		r.Plugins = append(r.Plugins, name)
		violations := w.array(p, "violations", ptr, false)
		r.Suppressed += len(w.array(p, "suppressedViolations", ptr, false))
		if w.str(p, "conclusion", ptr, false) == "failure" && len(violations) == 0 {
			r.Failures = append(r.Failures, bound(failure(name, meta)))
		}
		for j, vv := range violations {
			vptr := ptr + "/violations/" + strconv.Itoa(j)
			v := w.object(vv, vptr)
			if v == nil {
				continue
			}
			sev, custom := severity(w.str(v, "severity", vptr, false), w.str(v, "customSeverity", vptr, false))
			base := Finding{Source: Validation, Plugin: name, Rule: w.str(v, "ruleName", vptr, true), Severity: sev,
				Custom: custom, Message: w.str(v, "description", vptr, true), Fix: w.str(v, "suggestedFix", vptr, false)}
			constructs := w.array(v, "violatingConstructs", vptr, false)
			if len(constructs) == 0 {
				r.add(base)
			}
			for k, cv := range constructs {
				cptr := vptr + "/violatingConstructs/" + strconv.Itoa(k)
				c := w.object(cv, cptr)
				if c == nil {
					continue
				}
				f := base
				f.Path = w.str(c, "constructPath", cptr, false)
				template := ""
				if res := w.child(c, "cloudFormationResource", cptr); res != nil {
					template = w.str(res, "templatePath", cptr+"/cloudFormationResource", false)
					f.LogicalID = w.str(res, "logicalId", cptr+"/cloudFormationResource", false)
				}
				f.Stack = w.stacks.of(template, f.Path)
				r.add(f)
			}
		}
	}
}

// legacyReport reads the report aws-cdk-lib wrote before the schema had one.
func (w *walker) legacyReport(top map[string]any, r *Report) {
	for i, pv := range w.array(top, "pluginReports", "", true) {
		ptr := "/pluginReports/" + strconv.Itoa(i)
		p := w.object(pv, ptr)
		if p == nil {
			continue
		}
		summary := w.child(p, "summary", ptr)
		if summary == nil {
			w.fail(ptr, `"summary" is missing`)
			continue
		}
		name := w.str(summary, "pluginName", ptr+"/summary", true)
		meta := w.child(summary, "metadata", ptr+"/summary")
		if name == annotationsPlugin || meta["cdk:annotations"] == "true" {
			continue
		}
		r.Plugins = append(r.Plugins, name)
		violations := w.array(p, "violations", ptr, false)
		if w.str(summary, "status", ptr+"/summary", false) == "failure" && len(violations) == 0 {
			r.Failures = append(r.Failures, bound(failure(name, meta)))
		}
		for j, vv := range violations {
			vptr := ptr + "/violations/" + strconv.Itoa(j)
			v := w.object(vv, vptr)
			if v == nil {
				continue
			}
			sev, custom := severity(w.str(v, "severity", vptr, false), "")
			base := Finding{Source: Validation, Plugin: name, Rule: w.str(v, "ruleName", vptr, true), Severity: sev,
				Custom: custom, Message: w.str(v, "description", vptr, true), Fix: w.str(v, "fix", vptr, false)}
			key := "violatingConstructs"
			if _, ok := v[key]; !ok {
				key = "violatingResources"
			}
			constructs := w.array(v, key, vptr, false)
			if len(constructs) == 0 {
				r.add(base)
			}
			for k, cv := range constructs {
				cptr := vptr + "/" + key + "/" + strconv.Itoa(k)
				c := w.object(cv, cptr)
				if c == nil {
					continue
				}
				f := base
				f.Path = w.str(c, "constructPath", cptr, false)
				if f.LogicalID = w.str(c, "resourceLogicalId", cptr, false); f.LogicalID == "N/A" {
					f.LogicalID = ""
				}
				f.Stack = w.stacks.of(w.str(c, "templatePath", cptr, false), f.Path)
				r.add(f)
			}
		}
	}
}

func failure(plugin string, meta map[string]any) string {
	if why, ok := meta["error"].(string); ok && why != "" {
		return why
	}
	return "validation plugin " + plugin + " failed without saying why"
}

// severity reads a violation's severity as aws-cdk-lib normalizes it: none is an error, a name it
// does not know is custom (counted as a warning, its name kept).
func severity(s, custom string) (Severity, string) {
	switch strings.ToLower(s) {
	case "":
		return Error, ""
	case "fatal":
		return Fatal, ""
	case "error":
		return Error, ""
	case "warning", "warn":
		return Warning, ""
	case "info":
		return Info, ""
	case "custom":
		if custom == "" {
			custom = "custom"
		}
		return Warning, custom
	}
	return Warning, s
}

// stackIndex finds the stack of a finding: by its template (root-relative, as the report names
// it), by the template's file name (older reports name absolute paths), then by the longest
// stack whose display name (its construct path) starts the construct path.
type stackIndex struct {
	byTemplate map[string]string
	byBase     map[string][]string
	byPath     map[string]string
}

func indexStacks(a *assembly.Assembly) stackIndex {
	ix := stackIndex{byTemplate: map[string]string{}, byBase: map[string][]string{}, byPath: map[string]string{}}
	for _, s := range a.AllStacks() {
		ix.byTemplate[s.TemplatePath] = s.QualifiedID()
		base := path.Base(s.TemplatePath)
		ix.byBase[base] = append(ix.byBase[base], s.QualifiedID())
		ix.byPath[s.DisplayName] = s.QualifiedID()
	}
	return ix
}

func (ix stackIndex) of(template, constructPath string) string {
	if template != "" {
		t := strings.ReplaceAll(template, "\\", "/")
		if id, ok := ix.byTemplate[path.Clean(t)]; ok {
			return id
		}
		if ids := ix.byBase[path.Base(t)]; len(ids) == 1 {
			return ids[0]
		}
	}
	p := strings.TrimPrefix(constructPath, "/")
	for p != "" {
		if id, ok := ix.byPath[p]; ok {
			return id
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return ""
}
