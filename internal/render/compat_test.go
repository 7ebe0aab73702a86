package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/semver"
)

func mustVersions(t *testing.T, texts ...string) []semver.Version {
	t.Helper()
	out := make([]semver.Version, 0, len(texts))
	for _, s := range texts {
		v, err := semver.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestSchemaChangesViews(t *testing.T) {
	t.Parallel()
	under, ok := compat.UnderBumped, compat.OK
	changes := []compat.Change{
		{Path: "#/properties/a", Kind: compat.MadeRequired, Bump: semver.Major, Detail: "property a is now required"},
		{Path: "#/properties/bb", Kind: compat.AddedOptional, Bump: semver.Minor, Detail: "new optional property <bb> & c"},
	}
	cases := []struct {
		name       string
		in         SchemaChanges
		failed     bool
		text, json string
	}{
		{"no changes, nothing declared", SchemaChanges{}, false,
			"0 change(s); required bump: none\n",
			"{\n  \"changes\": [],\n  \"requiredBump\": \"none\",\n  \"verdict\": null\n}\n"},
		{"under-bumped", SchemaChanges{Changes: changes, Required: semver.Major, Verdict: &under, DeclaredOld: "1.0.0", DeclaredNew: "1.1.0"}, true,
			"major  made-required   #/properties/a   property a is now required\n" +
				"minor  added-optional  #/properties/bb  new optional property <bb> & c\n" +
				"2 change(s); required bump: major\ndeclared 1.0.0 → 1.1.0: under-bumped\n",
			"{\n  \"changes\": [\n    {\n      \"path\": \"#/properties/a\",\n      \"kind\": \"made-required\",\n      \"bump\": \"major\",\n" +
				"      \"detail\": \"property a is now required\"\n    },\n    {\n      \"path\": \"#/properties/bb\",\n      \"kind\": \"added-optional\",\n" +
				"      \"bump\": \"minor\",\n      \"detail\": \"new optional property <bb> & c\"\n    }\n  ],\n  \"requiredBump\": \"major\",\n" +
				"  \"verdict\": \"under-bumped\"\n}\n"},
		{"ok", SchemaChanges{Changes: changes[:1], Required: semver.Major, Verdict: &ok, DeclaredOld: "1.0.0", DeclaredNew: "2.0.0"}, false,
			"major  made-required  #/properties/a  property a is now required\n1 change(s); required bump: major\ndeclared 1.0.0 → 2.0.0: ok\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := c.in.Failed(); got != c.failed {
				t.Errorf("Failed() = %v, want %v", got, c.failed)
			}
			var b strings.Builder
			if err := SchemaChangesText(&b, c.in); err != nil || b.String() != c.text {
				t.Errorf("text (%v):\n%s\nwant:\n%s", err, b.String(), c.text)
			}
			if c.json == "" {
				return
			}
			b.Reset()
			if err := SchemaChangesJSON(&b, c.in); err != nil || b.String() != c.json {
				t.Errorf("json (%v):\n%s\nwant:\n%s", err, b.String(), c.json)
			}
		})
	}
}

func TestSpecMatchViews(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		in         SpecMatch
		text, json string
	}{
		{"some", SpecMatch{Spec: ">=1.2,<2.0", Candidates: mustVersions(t, "1.0.0", "1.2.0", "1.9.0"), Satisfying: mustVersions(t, "1.2.0", "1.9.0")},
			"spec \">=1.2,<2.0\": 2 of 3 versions satisfy it: 1.2.0 1.9.0\nlatest: 1.9.0\n",
			"{\n  \"spec\": \">=1.2,<2.0\",\n  \"satisfying\": [\n    \"1.2.0\",\n    \"1.9.0\"\n  ],\n  \"latest\": \"1.9.0\"\n}\n"},
		{"none", SpecMatch{Spec: "2", Candidates: mustVersions(t, "1.0.0")},
			"spec \"2\": 0 of 1 versions satisfy it: \nlatest: none\n",
			"{\n  \"spec\": \"2\",\n  \"satisfying\": [],\n  \"latest\": null\n}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			if err := SpecMatchText(&b, c.in); err != nil || b.String() != c.text {
				t.Errorf("text (%v):\n%q\nwant:\n%q", err, b.String(), c.text)
			}
			b.Reset()
			if err := SpecMatchJSON(&b, c.in); err != nil || b.String() != c.json {
				t.Errorf("json (%v):\n%s\nwant:\n%s", err, b.String(), c.json)
			}
		})
	}
}

// A match is the result on the output; no match is explained on the diagnostic stream and the
// output stays empty, so a script reading it sees nothing rather than a sentence.
func TestResolutionViews(t *testing.T) {
	t.Parallel()
	want := mustVersions(t, "1.3.0", "3.0.0")
	found := Resolution{Wanted: "1.3.0", Want: want[0], Resolved: mustVersions(t, "1.5.2")[0], Rule: semver.RuleSameMajor}
	none := Resolution{Wanted: "3.0.0", Want: want[1], Rule: semver.RuleNone}
	cases := []struct {
		name                 string
		in                   Resolution
		failed               bool
		out, diag, jsonValue string
	}{
		{"found", found, false, "1.5.2 (same-major match for 1.3.0)\n", "",
			"{\n  \"wanted\": \"1.3.0\",\n  \"resolved\": \"1.5.2\",\n  \"rule\": \"same-major\"\n}\n"},
		{"none", none, true, "", "no available version matches 3.0.0: none has major version 3\n",
			"{\n  \"wanted\": \"3.0.0\",\n  \"resolved\": null,\n  \"rule\": \"none\"\n}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := c.in.Failed(); got != c.failed {
				t.Errorf("Failed() = %v, want %v", got, c.failed)
			}
			var out, diag strings.Builder
			if err := ResolutionText(&out, &diag, c.in); err != nil || out.String() != c.out || diag.String() != c.diag {
				t.Errorf("text (%v): out %q diag %q, want %q and %q", err, out.String(), diag.String(), c.out, c.diag)
			}
			out.Reset()
			if err := ResolutionJSON(&out, c.in); err != nil || out.String() != c.jsonValue {
				t.Errorf("json (%v):\n%s\nwant:\n%s", err, out.String(), c.jsonValue)
			}
		})
	}
}

func TestCompatMatrixViews(t *testing.T) {
	t.Parallel()
	rows := []compat.MatrixRow{
		{Combination: compat.Combination{CLI: compat.Old, Framework: compat.Old, Bootstrap: compat.Old, App: compat.Old}, Outcome: compat.Legacy, Finding: "legacy"},
		{Combination: compat.Combination{CLI: compat.New, Framework: compat.New, Bootstrap: compat.Old, App: compat.New}, Outcome: compat.Fails,
			Finding: "no roles", Action: "bootstrap", Decided: true},
	}
	var b strings.Builder
	if err := CompatMatrixText(&b, rows); err != nil {
		t.Fatal(err)
	}
	wantText := "CLI  framework  bootstrap  app  mode   what happens\n" +
		"old  old        old        old  1.0    legacy\n" +
		"new  new        old        new  error  no roles → bootstrap [decided by cdkbot]\n"
	if b.String() != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), wantText)
	}
	b.Reset()
	if err := CompatMatrixJSON(&b, rows); err != nil {
		t.Fatal(err)
	}
	wantJSON := "[\n  {\n    \"cli\": \"old\",\n    \"framework\": \"old\",\n    \"bootstrap\": \"old\",\n    \"app\": \"old\",\n    \"mode\": \"1.0\",\n" +
		"    \"finding\": \"legacy\"\n  },\n  {\n    \"cli\": \"new\",\n    \"framework\": \"new\",\n    \"bootstrap\": \"old\",\n    \"app\": \"new\",\n" +
		"    \"mode\": \"error\",\n    \"finding\": \"no roles\",\n    \"action\": \"bootstrap\",\n    \"decidedByCdkbot\": true\n  }\n]\n"
	if b.String() != wantJSON {
		t.Errorf("json:\n%s\nwant:\n%s", b.String(), wantJSON)
	}
	b.Reset()
	if err := CompatMatrixJSON(&b, nil); err != nil || b.String() != "[]\n" {
		t.Errorf("empty matrix json (%v): %q", err, b.String())
	}
}

func TestCompatChecksJSONAndVerdict(t *testing.T) {
	t.Parallel()
	checks := CompatChecks{
		{Name: "toolkit", Status: compat.Pass, Finding: "schema <55> & more"},
		{Name: "cli", Status: compat.Fail, Finding: "too old", Action: "upgrade"},
	}
	if !checks.Failed() || checks[:1].Failed() || CompatChecks(nil).Failed() {
		t.Errorf("Failed(): %v %v %v", checks.Failed(), checks[:1].Failed(), CompatChecks(nil).Failed())
	}
	var b strings.Builder
	if err := CompatJSON(&b, checks[:1]); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"checks\": [\n    {\n      \"name\": \"toolkit\",\n      \"status\": \"pass\",\n      \"finding\": \"schema <55> & more\""
	if !strings.HasPrefix(b.String(), want) || !strings.HasSuffix(b.String(), "],\n  \"status\": \"pass\"\n}\n") {
		t.Errorf("got:\n%s", b.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// Every view reports a failed write, so the command does not exit 0 with half its output.
func TestCompatViewsReportWriteErrors(t *testing.T) {
	t.Parallel()
	w := failingWriter{}
	res := Resolution{Wanted: "1.0.0", Want: mustVersions(t, "1.0.0")[0], Resolved: mustVersions(t, "1.0.0")[0], Rule: semver.RuleExact}
	for name, err := range map[string]error{
		"SchemaChangesText": SchemaChangesText(w, SchemaChanges{}),
		"SchemaChangesJSON": SchemaChangesJSON(w, SchemaChanges{}),
		"SpecMatchText":     SpecMatchText(w, SpecMatch{}),
		"SpecMatchJSON":     SpecMatchJSON(w, SpecMatch{}),
		"ResolutionText":    ResolutionText(w, w, res),
		"ResolutionJSON":    ResolutionJSON(w, res),
		"CompatMatrixText":  CompatMatrixText(w, nil),
		"CompatMatrixJSON":  CompatMatrixJSON(w, nil),
		"CompatJSON":        CompatJSON(w, nil),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
