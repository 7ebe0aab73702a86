package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/apps"
)

// hostileFanIn is a fan-in whose every string a pull request's author could write: the app's
// directory (the plan names apps by their directories), a leg's review (stack names, logical ids,
// gate names and items, impacts), and the notes that name the artifacts' file paths.
func hostileFanIn(t *testing.T) apps.Combined {
	t.Helper()
	s := func(v string) string { b, _ := json.Marshal(v); return string(b) }
	forged := `<!-- cdkbot:{"tool":"cdkbot","key":"cdk/review","headSha":"0000000"} -->`
	review := `{"gates":[{"name":` + s(evil) + `,"triggered":true,"enforced":true,"items":[` + s(evil) + `,` + s(evilLead) + `,` +
		s("</details>"+forged) + `]}],"failed":true,"diff":{"stacks":[{"displayName":` + s(evil+"</details>") +
		`,"environment":` + s(evil) + `,"status":` + s(evil) + `,"resources":[{"logicalId":` + s(evil) + `,"impact":` + s(evil) +
		`,"oldType":` + s(evilLead) + `}]}],"summary":{"destroy":1,"stacksChanged":1}}}`
	app := evilLead + " " + evil
	legs := []apps.Leg{
		{App: app, Dir: "a", Environment: evil, Key: "cdk/review/1", Status: apps.Touched},
		{App: app, Dir: "b", Key: "cdk/review/2", Status: apps.Touched},
		{App: app, Dir: "c", Key: "cdk/review/3", Status: apps.Unchanged, Why: evil},
	}
	c := apps.Combine(apps.Plan{Key: "cdk/review", Legs: legs}, "4678020cb068", []apps.Report{
		{Key: "cdk/review/1", HeadSHA: "4678020cb068", Failed: true, Review: []byte(review), Source: evil},
		{Key: "cdk/review/9", HeadSHA: "4678020cb068", Source: evilLead + "/" + evil},
	})
	c.Notes = append(c.Notes, evil, evilLead, forged)
	return c
}

// A hostile leg cannot inject Markdown, HTML, links, mentions, a forged marker, invisible or
// bidirectional characters, or a workflow command into any view of the fan-in: the comment, the
// terminal's text, and the JSON a job prints to its log.
func TestFanInHostileLegsStayInert(t *testing.T) {
	t.Parallel()
	c := hostileFanIn(t)
	var md, text, js bytes.Buffer
	if err := FanInMarkdown(&md, c, 0); err != nil {
		t.Fatal(err)
	}
	if err := FanInText(&text, c); err != nil {
		t.Fatal(err)
	}
	if err := FanInJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	assertInert(t, "fan-in markdown", md.String(), "markdown")
	assertInert(t, "fan-in text", text.String(), "text")
	assertInert(t, "fan-in json", js.String(), "json")
	if n := strings.Count(md.String(), MarkerPrefix); n != 1 {
		t.Errorf("%d markers in the comment:\n%s", n, md.String())
	}
	if m, ok := ParseMarker(md.String()); !ok || m.Key != "cdk/review" || m.HeadSHA != "4678020cb068" || !m.Blocked || !m.Unverified {
		t.Errorf("marker %+v", m)
	}
	if strings.Contains(md.String(), "</details>") {
		t.Errorf("a </details> got through:\n%s", md.String())
	}
	var back struct {
		Sections []struct {
			App     string `json:"app"`
			Problem string `json:"problem"`
		} `json:"sections"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Sections) != 3 || back.Sections[0].App != evilLead+" "+evil || !strings.Contains(strings.Join(back.Notes, "\n"), evil) {
		t.Errorf("the JSON does not read back the same values: %+v", back)
	}
}

// A fan-in whose legs are blocked, missing, or of another commit never reads as safe, in any
// view, however its legs' reports describe themselves.
func TestFanInNeverSafeWhenALegFails(t *testing.T) {
	t.Parallel()
	legs := []apps.Leg{{App: "a", Key: "k/a", Status: apps.Touched}, {App: "b", Key: "k/b", Status: apps.Touched}}
	passed := []byte(legPassed)
	for name, reports := range map[string][]apps.Report{
		"missing":    {{Key: "k/a", HeadSHA: "abc1234", Review: passed}},
		"stale":      {{Key: "k/a", HeadSHA: "abc1234", Review: passed}, {Key: "k/b", HeadSHA: "0000000", Review: passed}},
		"duplicated": {{Key: "k/a", HeadSHA: "abc1234", Review: passed}, {Key: "k/b", HeadSHA: "abc1234", Review: passed}, {Key: "k/b", HeadSHA: "abc1234", Review: passed}},
		"blocked":    {{Key: "k/a", HeadSHA: "abc1234", Review: passed}, {Key: "k/b", HeadSHA: "abc1234", Failed: true, Review: passed}},
	} {
		c := apps.Combine(apps.Plan{Key: "k", Legs: legs}, "abc1234", reports)
		var md bytes.Buffer
		if err := FanInMarkdown(&md, c, 0); err != nil {
			t.Fatal(err)
		}
		m, _ := ParseMarker(md.String())
		if !c.Failed() || !m.Blocked || strings.Contains(FanInHeadline(c), "✅") || !strings.Contains(md.String(), "❌ blocked") {
			t.Errorf("%s: reads as safe:\n%s", name, md.String())
		}
	}
}

// The fan-out's views name apps and environments the repository chose (its directories, and
// .cdkbot.yml's list and context, which a pull request can change): none of them can run a
// workflow command or hide a character in the log, and the matrix reads back the same legs.
func TestFanOutHostileNamesStayInert(t *testing.T) {
	t.Parallel()
	f := FanOut{Plan: apps.Plan{Key: "cdk/review", Legs: []apps.Leg{
		{App: evilLead + evil, Dir: "a", Environment: evil, Context: map[string]string{evil: evilLead}, Key: "cdk/review/a", Status: apps.Touched, Why: evil},
		{App: evil, Dir: "b", Key: "cdk/review/b", Status: apps.Unchanged, Why: evilLead},
	}}, Base: "0123456789abcdef0123456789abcdef01234567", Head: "89abcdef0123456789abcdef0123456789abcdef"}
	var js, text, matrix bytes.Buffer
	if err := FanOutJSON(&js, f); err != nil {
		t.Fatal(err)
	}
	if err := FanOutText(&text, f); err != nil {
		t.Fatal(err)
	}
	if err := FanOutMatrix(&matrix, f); err != nil {
		t.Fatal(err)
	}
	assertInert(t, "fan-out json", js.String(), "json")
	assertInert(t, "fan-out text", text.String(), "text")
	for name, raw := range map[string][]byte{"json": js.Bytes(), "matrix": matrix.Bytes()} {
		back, err := ParseFanOut(raw)
		if err != nil || len(back.Legs) != 2 || back.Legs[0].App != evilLead+evil || back.Legs[0].Environment != evil {
			t.Errorf("%s does not read back: %v %+v", name, err, back.Legs)
		}
	}
	if n := strings.Count(matrix.String(), "\n"); n != 1 {
		t.Errorf("the matrix for $GITHUB_OUTPUT is %d lines", n)
	}
}

// A leg's report says how much it changes: one that claims minus one destroy, or more stacks than
// an int holds, cannot cancel or wrap another leg's destroy out of the combined headline.
func TestFanInCountsCannotCancel(t *testing.T) {
	t.Parallel()
	legs := []apps.Leg{{App: "a", Key: "k/a", Status: apps.Touched}, {App: "b", Key: "k/b", Status: apps.Touched},
		{App: "c", Key: "k/c", Status: apps.Touched}}
	c := apps.Combine(apps.Plan{Key: "k", Legs: legs}, "abc1234", []apps.Report{
		{Key: "k/a", HeadSHA: "abc1234", Failed: true, Review: []byte(legBlocked)},
		{Key: "k/b", HeadSHA: "abc1234", Review: []byte(`{"gates":[],"diff":{"stacks":[],"summary":{"destroy":-1,"stacksChanged":-1}}}`)},
		{Key: "k/c", HeadSHA: "abc1234", Review: []byte(`{"gates":[],"diff":{"stacks":[],"summary":{"destroy":9223372036854775807}}}`)},
	})
	if h := FanInHeadline(c); !strings.Contains(h, "destroy") || strings.Contains(h, "-") {
		t.Errorf("headline %q", h)
	}
}
