package findings

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

func load(t *testing.T, dir string) *assembly.Assembly {
	t.Helper()
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// loadWith is the real head assembly with validation-report.json (or another file) replaced.
func loadWith(t *testing.T, files map[string]string) *assembly.Assembly {
	t.Helper()
	fsys := fstest.MapFS{}
	entries, err := os.ReadDir("testdata/head")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ReportFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata/head", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fsys[e.Name()] = &fstest.MapFile{Data: b}
	}
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
	}
	a, err := assembly.Load(fsys, "cdk.out")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func summary(r *Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, strings.Join([]string{f.Status.String(), f.Source.String(), f.Severity.String(), f.Plugin,
			f.Rule, f.Stack, f.Path, f.LogicalID, f.Message}, " | "))
	}
	return out
}

// The assemblies made by testdata/generate.sh with the real aws-cdk-lib: every finding of the
// plugin, the template validator and the annotations is read, with its stack, and compared with
// the base, which was synthesized without template validation (as cdkbot synthesizes a base).
func TestReadsWhatTheFrameworkWrote(t *testing.T) {
	t.Parallel()
	head, err := Read(load(t, "testdata/head"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := Read(load(t, "testdata/base"))
	if err != nil {
		t.Fatal(err)
	}
	Compare(head, base)
	want := []string{
		"new | validation | error | bucket-encryption | S3_BUCKET_ENCRYPTION | Data | Data/ArchiveV2/Resource | ArchiveV2D864CA9B | Bucket has no BucketEncryption configured",
		"new | validation | error | bucket-encryption | S3_BUCKET_ENCRYPTION | Events | Events/Scratch/Resource | ScratchF72D2ED6 | Bucket has no BucketEncryption configured",
		"new | annotation | warning |  | AwsSolutions-S1 | Data | Data/ArchiveV2 |  | The S3 Bucket has server access logs disabled.",
		"new | annotation | warning |  | AwsSolutions-SNS3 | Events | Events/Alarms |  | The SNS Topic does not require publishers to use SSL.",
		"not-compared | validation | warning | CloudFormation Validate | F3002 | Events | Events/Alarms/Resource | Alarms04B5A0BF | DisplayNam: Additional properties are not allowed ('DisplayNam' was unexpected. Did you mean 'DisplayName'?)",
		"new | validation | warning | bucket-encryption | S3_BUCKET_VERSIONING | Events | Events/Scratch/Resource | ScratchF72D2ED6 | Bucket versioning is off",
		"existing | annotation | info |  |  | Data | Data |  | Data holds the buckets of record.",
	}
	if got := summary(head); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if head.Findings[0].Fix != "Set encryption: s3.BucketEncryption.KMS_MANAGED" {
		t.Errorf("fix: %q", head.Findings[0].Fix)
	}
	if strings.Join(head.Plugins, ",") != "CloudFormation Validate,bucket-encryption" || strings.Join(base.Plugins, ",") != "bucket-encryption" {
		t.Errorf("plugins: head %v base %v", head.Plugins, base.Plugins)
	}
	c := head.Counts()
	if c[Error] != (Count{All: 2, New: 2}) || c[Warning] != (Count{All: 4, New: 3}) || c[Info] != (Count{All: 1}) {
		t.Errorf("counts: %+v", c)
	}
}

// Without a base (a first deployment) everything is new; with the same assembly as base,
// nothing is, and the template validator's findings compare once the base ran it.
func TestCompare(t *testing.T) {
	t.Parallel()
	read := func() *Report {
		r, err := Read(load(t, "testdata/head"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := read()
	Compare(first, nil)
	for _, f := range first.Findings {
		if f.Status != New {
			t.Errorf("no base: %v is %s", f, f.Status)
		}
	}
	same := read()
	Compare(same, read())
	for _, f := range same.Findings {
		if f.Status != Existing {
			t.Errorf("same base: %v is %s", f, f.Status)
		}
	}
	validated := read()
	Compare(validated, &Report{Plugins: []string{TemplateValidator}})
	for _, f := range validated.Findings {
		if f.Status != New {
			t.Errorf("base validated without findings: %v is %s", f, f.Status)
		}
	}
}

// No report (no plugin ran, or none found anything) is no validation finding and no error.
func TestNoReport(t *testing.T) {
	t.Parallel()
	r, err := Read(loadWith(t, nil))
	if err != nil || r.Problem != "" {
		t.Fatal(err, r.Problem)
	}
	for _, f := range r.Findings {
		if f.Source == Validation {
			t.Errorf("validation finding without a report: %v", f)
		}
	}
}

// A broken report names the file and the field, keeps the annotations, and says what to do.
func TestBrokenReportSaysWhere(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ body, want string }{
		"syntax":        {"{\n  \"version\": \"55.0.0\",\n  \"pluginReports\": [\n    {,\n", "validation-report.json: line 4, column 6: not valid JSON"},
		"not an object": {`[]`, "validation-report.json: /: want an object, found an array"},
		"no reports":    {`{"version":"55.0.0"}`, `validation-report.json: /: "pluginReports" is missing`},
		"bad severity":  {`{"version":"55.0.0","pluginReports":[{"pluginName":"p","conclusion":"failure","violations":[{"ruleName":"r","description":"d","severity":3,"violatingConstructs":[]}]}]}`, "validation-report.json: /pluginReports/0/violations/0/severity: want a string, found a number"},
		"no rule name":  {`{"version":"55.0.0","pluginReports":[{"pluginName":"p","conclusion":"failure","violations":[{"description":"d","violatingConstructs":[]}]}]}`, `validation-report.json: /pluginReports/0/violations/0: "ruleName" is missing`},
		"bad construct": {`{"version":"55.0.0","pluginReports":[{"pluginName":"p","conclusion":"failure","violations":[{"ruleName":"r","description":"d","violatingConstructs":["x"]}]}]}`, "validation-report.json: /pluginReports/0/violations/0/violatingConstructs/0: want an object, found a string"},
		"two values":    {`{"pluginReports":[]} {}`, "validation-report.json: line 1, column 22: not valid JSON: more than one JSON value"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, err := Read(loadWith(t, map[string]string{ReportFile: tc.body}))
			var ae *assembly.Error
			if !errors.As(err, &ae) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to start with %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "Synthesize the app again") || r.Problem != err.Error() {
				t.Errorf("no hint, or no problem recorded: %q / %q", err, r.Problem)
			}
			if len(r.Findings) == 0 {
				t.Error("the annotations were lost with the report")
			}
		})
	}
}

// A report that is no regular file, or too large to decode, is refused by name.
func TestReportFileIsBounded(t *testing.T) {
	t.Parallel()
	big := `{"pluginReports":[],"pad":"` + strings.Repeat("x", MaxReportSize) + `"}`
	for name, files := range map[string]map[string]string{
		"a directory": {ReportFile + "/x": "{}"},
		"too large":   {ReportFile: big},
	} {
		_, err := Read(loadWith(t, files))
		var ae *assembly.Error
		if !errors.As(err, &ae) || ae.File != ReportFile {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Read(loadWith(t, map[string]string{ReportFile: big})); !strings.Contains(err.Error(), "over cdkbot's limit of 16777216 bytes") {
		t.Errorf("too large: %v", err)
	}
	if _, err := Read(loadWith(t, map[string]string{ReportFile + "/x": "{}"})); !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}

// A plugin that failed to run, suppressed violations, custom severities, violations without
// constructs, the annotation report (which the manifest already holds) and the legacy file.
func TestReportShapes(t *testing.T) {
	t.Parallel()
	body := `{"version":"55.0.0","pluginReports":[
	  {"pluginName":"crashy","conclusion":"failure","violations":[],"metadata":{"error":"Validation plugin 'crashy' failed: boom"}},
	  {"pluginName":"quiet","conclusion":"failure","violations":[]},
	  {"pluginName":"nag","conclusion":"success","violations":[
	    {"ruleName":"N1","description":"odd","severity":"custom","customSeverity":"advisory","violatingConstructs":[]},
	    {"ruleName":"N2","description":"loud","severity":"FATAL","violatingConstructs":[{"constructPath":"Prod/Thing/Resource"}]},
	    {"ruleName":"N3","description":"unrated"}],
	   "suppressedViolations":[{"ruleName":"N4","description":"x","severity":"error","violatingConstructs":[],"acknowledgedId":"nag::N4"}]},
	  {"pluginName":"Construct Annotations","conclusion":"success","metadata":{"cdk:annotations":"true"},
	   "violations":[{"ruleName":"a","description":"dup","severity":"warning","violatingConstructs":[]}]}]}`
	r, err := Read(loadWith(t, map[string]string{ReportFile: body}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.Failures, "|") != "Validation plugin 'crashy' failed: boom|validation plugin quiet failed without saying why" {
		t.Errorf("failures: %q", r.Failures)
	}
	if r.Suppressed != 1 || strings.Join(r.Plugins, ",") != "crashy,nag,quiet" {
		t.Errorf("suppressed %d, plugins %v", r.Suppressed, r.Plugins)
	}
	got := map[string]Finding{}
	for _, f := range r.Findings {
		if f.Source == Validation {
			got[f.Rule] = f
		}
		if f.Message == "dup" {
			t.Errorf("the annotation report is shown beside the manifest's annotations: %v", f)
		}
	}
	if f := got["N1"]; f.Severity != Warning || f.Custom != "advisory" {
		t.Errorf("custom severity: %+v", f)
	}
	if f := got["N2"]; f.Severity != Fatal || f.Path != "Prod/Thing/Resource" {
		t.Errorf("fatal: %+v", f)
	}
	if f := got["N3"]; f.Severity != Error {
		t.Errorf("a violation without severity is an error, as aws-cdk-lib reads it: %+v", f)
	}

	legacy := `{"title":"Validation Report","pluginReports":[{"version":"1.0","summary":{"pluginName":"old","status":"failure"},
	  "violations":[{"ruleName":"L1","description":"legacy","fix":"do it","severity":"error",
	    "violatingConstructs":[{"constructPath":"Data/Logs/Resource","resourceLogicalId":"Logs6819BB44",
	      "templatePath":"/home/someone/app/cdk.out/Data.template.json","locations":["Properties"]}]}]}]}`
	r, err = Read(loadWith(t, map[string]string{LegacyReportFile: legacy}))
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, f := range r.Findings {
		if f.Rule == "L1" {
			found = f.Stack == "Data" && f.LogicalID == "Logs6819BB44" && f.Fix == "do it" && f.Plugin == "old"
		}
	}
	if !found {
		t.Errorf("legacy report: %v", summary(r))
	}
}

// The report is the app's output: its size is bounded however many findings it has, and a text
// however long it is.
func TestBounds(t *testing.T) {
	t.Parallel()
	var vs []string
	long := strings.Repeat("é", MaxText/2+10)
	for range MaxFindings + 10 {
		vs = append(vs, `{"ruleName":"R","description":"`+long+`","severity":"warning","violatingConstructs":[{"constructPath":"Data/X"}]}`)
	}
	body := `{"version":"55.0.0","pluginReports":[{"pluginName":"p","conclusion":"success","violations":[` + strings.Join(vs, ",") + `]}]}`
	r, err := Read(loadWith(t, map[string]string{ReportFile: body}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Omitted == 0 || len(r.Findings) > MaxFindings {
		t.Errorf("kept %d findings, omitted %d", len(r.Findings), r.Omitted)
	}
	for _, f := range r.Findings {
		if len(f.Message) > MaxText+len("…") || !strings.HasSuffix(f.Message, "…") && f.Source == Validation {
			t.Fatalf("message of %d bytes", len(f.Message))
		}
	}
	var last Finding
	for _, f := range r.Findings {
		if f.Source == Validation {
			last = f
		}
	}
	b, _ := json.Marshal(last)
	if !strings.Contains(string(b), `"severity":"warning"`) || !strings.Contains(string(b), `"source":"validation"`) {
		t.Errorf("json: %s", b)
	}
}

func TestSplitAck(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"Logs are off. [ack: AwsSolutions-S1]": {"Logs are off.", "AwsSolutions-S1"},
		"Logs are off (nag::AwsSolutions-S1)":  {"Logs are off", "nag::AwsSolutions-S1"},
		"Logs are off (see the docs)":          {"Logs are off (see the docs)", ""},
		"[ack: x] in the middle":               {"[ack: x] in the middle", ""},
		"plain":                                {"plain", ""},
	} {
		if text, rule := splitAck(in); text != want[0] || rule != want[1] {
			t.Errorf("%q: %q %q", in, text, rule)
		}
	}
}

// Whatever the report holds, reading it neither panics nor loses the annotations, and an error
// is always recorded as the report's problem.
func FuzzReport(f *testing.F) {
	for _, seed := range []string{`{"version":"55.0.0","pluginReports":[]}`, `[]`, `{"pluginReports":[{"pluginName":1}]}`,
		`{"pluginReports":[{"pluginName":"p","violations":[{"ruleName":"r","description":"d","violatingConstructs":[{"cloudFormationResource":[]}]}]}]}`} {
		f.Add(seed)
	}
	head, err := os.ReadFile("testdata/head/" + ReportFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(head))
	f.Fuzz(func(t *testing.T, body string) {
		r, err := Read(loadWith(t, map[string]string{ReportFile: body}))
		if err != nil && r.Problem != err.Error() || err == nil && r.Problem != "" {
			t.Fatalf("error %v, problem %q", err, r.Problem)
		}
		annotations := 0
		for _, f := range r.Findings {
			if f.Source == Annotation {
				annotations++
			}
		}
		if annotations != 3 || len(r.Findings) > MaxFindings {
			t.Fatalf("%d annotations, %d findings", annotations, len(r.Findings))
		}
	})
}

// The gate counts new validation errors, plugins that did not run and an unreadable report;
// not warnings, not errors the base had, not annotations.
func TestReviewAndGateItems(t *testing.T) {
	t.Parallel()
	r := Review(load(t, "testdata/base"), load(t, "testdata/head"), nil)
	want := []string{
		"bucket-encryption S3_BUCKET_ENCRYPTION on Data/ArchiveV2/Resource in Data: Bucket has no BucketEncryption configured",
		"bucket-encryption S3_BUCKET_ENCRYPTION on Events/Scratch/Resource in Events: Bucket has no BucketEncryption configured",
	}
	if got := GateItems(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("gate items:\n%s", strings.Join(got, "\n"))
	}
	same := Review(load(t, "testdata/head"), load(t, "testdata/head"), nil)
	if got := GateItems(same); len(got) != 0 {
		t.Errorf("errors the base had gate: %v", got)
	}
	onlyData := Review(nil, load(t, "testdata/head"), func(s *assembly.Stack) bool { return s.ID == "Data" })
	for _, f := range onlyData.Findings {
		if f.Stack != "Data" {
			t.Errorf("finding of a stack left out: %v", f)
		}
	}
	broken := Review(nil, loadWith(t, map[string]string{ReportFile: `{"pluginReports":[{"pluginName":"p","conclusion":"failure","metadata":{"error":"boom"}}]} x`}), nil)
	if got := GateItems(broken); len(got) != 1 || !strings.HasPrefix(got[0], "the head assembly's validation-report.json: line 1, column ") {
		t.Errorf("unreadable report: %q", got)
	}
	failed := Review(nil, loadWith(t, map[string]string{ReportFile: `{"pluginReports":[{"pluginName":"p","conclusion":"failure","metadata":{"error":"boom"}}]}`}), nil)
	if got := GateItems(failed); strings.Join(got, "|") != "validation did not run: boom" {
		t.Errorf("failed plugin: %q", got)
	}
}

// An app that reported nothing has no findings to show: the review carries none.
func TestReviewOfNothing(t *testing.T) {
	t.Parallel()
	a := loadWith(t, nil)
	if r := Review(nil, a, func(*assembly.Stack) bool { return false }); r != nil {
		t.Errorf("findings of no stack: %+v", r)
	}
}

// With @aws-cdk/core:annotationsInValidationReport the real report repeats the annotations (the
// manifest still has them): they are read once. The legacy policy-validation-report.json that
// @aws-cdk/core:validationReportJson writes beside it says the same as the report.
func TestFlagsOfTheRealFramework(t *testing.T) {
	t.Parallel()
	head, err := Read(load(t, "testdata/head"))
	if err != nil {
		t.Fatal(err)
	}
	flags, err := Read(load(t, "testdata/head-flags"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(summary(flags), "\n"), strings.Join(summary(head), "\n"); got != want {
		t.Errorf("with the annotations in the report:\n%s\nwant:\n%s", got, want)
	}
	legacy, err := os.ReadFile("testdata/head-flags/" + LegacyReportFile)
	if err != nil {
		t.Fatal(err)
	}
	old, err := Read(loadWith(t, map[string]string{LegacyReportFile: string(legacy)}))
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, f := range old.Findings {
		if f.Source == Validation {
			got = append(got, f.Describe())
		}
	}
	for _, f := range head.Findings {
		if f.Source == Validation {
			want = append(want, f.Describe())
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("legacy report:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
