package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/apps"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

const legBlocked = `{"gates":[{"name":"destroy","triggered":true,"enforced":true,"items":["Data/Table (AWS::DynamoDB::Table)"]}],
"failed":true,"diff":{"stacks":[{"displayName":"ShopData","environment":"aws://123456789012/eu-west-1","status":"changed",
"resources":[{"logicalId":"Table","impact":"destroy","oldType":"AWS::DynamoDB::Table"}]}],
"summary":{"destroy":1,"stacksChanged":1}}}`

const legPassed = `{"gates":[],"failed":false,"diff":{"stacks":[{"displayName":"Network","environment":"aws://123456789012/eu-west-1",
"status":"changed","resources":[{"logicalId":"Vpc","impact":"create","newType":"AWS::EC2::VPC"}]}],
"summary":{"create":1,"stacksChanged":1}}}`

func fanInFixture() apps.Combined {
	envs := apps.Environments(map[string][]string{"stage": {"dev", "prod"}})
	list := []apps.App{{Name: "infra/network", Dir: "infra/network", Environments: envs},
		{Name: "services/shop/infra", Dir: "services/shop/infra", Environments: envs},
		{Name: "services/users/infra", Dir: "services/users/infra", Environments: envs}}
	p := apps.NewPlan("cdk/review", list, apps.Keys{"infra/network": "1", "services/shop/infra": "2", "services/users/infra": "3"},
		apps.Keys{"infra/network": "9", "services/shop/infra": "8", "services/users/infra": "3"}, "")
	return apps.Combine(p, "4678020cb068", []apps.Report{
		{Key: "cdk/review/infra/network/dev", HeadSHA: "4678020cb068", Review: []byte(legPassed)},
		{Key: "cdk/review/infra/network/prod", HeadSHA: "4678020cb068", Review: []byte(legPassed)},
		{Key: "cdk/review/services/shop/infra/prod", HeadSHA: "4678020cb068", Failed: true, Review: []byte(legBlocked)},
	})
}

// The combined comment: a headline over every app, a row per app and environment (blocked and
// missing first, the unchanged last), and a section per reviewed leg.
func TestFanInViews(t *testing.T) {
	c := fanInFixture()
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
	golden.Assert(t, "testdata/fanin/combined.md", md.Bytes())
	golden.Assert(t, "testdata/fanin/combined.txt", text.Bytes())
	golden.Assert(t, "testdata/fanin/combined.json", js.Bytes())
	m, ok := ParseMarker(md.String())
	if !ok || m.Key != "cdk/review" || m.HeadSHA != "4678020cb068" || !m.Blocked || !m.Unverified {
		t.Errorf("marker %+v", m)
	}
	if h := FanInHeadline(c); !strings.HasPrefix(h, "❌ blocked · 6 app environments: 3 reviewed, 1 blocked, 1 without a valid report, 2 unchanged · 3 stacks") {
		t.Errorf("headline %q", h)
	}
}

// A leg's report is data pull request code could write: its strings are escaped (no mention,
// link, HTML or marker end gets through), its rows bounded, and the comment fits the budget.
func TestFanInEscapesLegReports(t *testing.T) {
	hostile := `{"gates":[{"name":"destroy --> <img src=x>","triggered":true,"enforced":true,"items":["@everyone [x](https://evil.example) <script>"]}],
"diff":{"stacks":[{"displayName":"@org/team <b>","environment":"-->","status":"changed",
"resources":[` + strings.Repeat(`{"logicalId":"A<!--","impact":"destroy","oldType":"x"},`, 5000) + `{"logicalId":"Z","impact":"create"}]}],
"summary":{"destroy":1,"stacksChanged":1}}}`
	p := apps.NewPlan("k", []apps.App{{Name: "a", Dir: "a", Environments: []apps.Environment{{}}}}, apps.Keys{"a": "1"}, apps.Keys{"a": "2"}, "")
	c := apps.Combine(p, "h", []apps.Report{{Key: "k/a", HeadSHA: "h", Failed: true, Review: []byte(hostile)}})
	var md bytes.Buffer
	if err := FanInMarkdown(&md, c, 16<<10); err != nil {
		t.Fatal(err)
	}
	body := md.String()
	if len(body) > 16<<10 {
		t.Errorf("%d bytes, over the budget", len(body))
	}
	for _, bad := range []string{"<script>", "<img", "<b>", "@everyone", "@org", "](https://", "A<!--"} {
		if strings.Contains(body, bad) {
			t.Errorf("the comment holds %q", bad)
		}
	}
	if strings.Count(body, "-->") != 1 {
		t.Errorf("the marker must be the only HTML comment end:\n%s", body[:400])
	}
	// Not cdkbot's JSON at all: said so, and the leg's verdict still counts.
	c = apps.Combine(p, "h", []apps.Report{{Key: "k/a", HeadSHA: "h", Review: []byte("<html>")}})
	md.Reset()
	if err := FanInMarkdown(&md, c, 0); err != nil || !strings.Contains(md.String(), "not cdkbot") {
		t.Errorf("%v\n%s", err, md.String())
	}
}

func TestFanOutViews(t *testing.T) {
	envs := apps.Environments(map[string][]string{"stage": {"dev", "prod"}})
	list := []apps.App{{Name: "infra/network", Dir: "infra/network", Environments: envs},
		{Name: "root", Dir: "", Environments: []apps.Environment{{}}}}
	f := FanOut{Plan: apps.NewPlan("cdk/review", list, apps.Keys{"infra/network": "1", "": "2"},
		apps.Keys{"infra/network": "9", "": "2"}, ""), Base: "9f2c1a0b7d4e5f60", Head: "4678020cb0681234"}
	var text, js, matrix bytes.Buffer
	for _, err := range []error{FanOutText(&text, f), FanOutJSON(&js, f), FanOutMatrix(&matrix, f)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	golden.Assert(t, "testdata/fanin/apps.txt", text.Bytes())
	golden.Assert(t, "testdata/fanin/apps.json", js.Bytes())
	golden.Assert(t, "testdata/fanin/apps-matrix.json", matrix.Bytes())
	if strings.Count(matrix.String(), "\n") != 1 {
		t.Error("the matrix must be one line, for $GITHUB_OUTPUT")
	}
	// The fan-in reads either view back to the same legs.
	for _, raw := range [][]byte{js.Bytes(), matrix.Bytes()} {
		back, err := ParseFanOut(raw)
		if err != nil {
			t.Fatal(err)
		}
		if back.Key != f.Key || len(back.Legs) != 3 || back.Legs[0].Context["stage"] != "dev" || back.Head != f.Head {
			t.Errorf("%+v", back)
		}
	}
	var m struct {
		Matrix struct {
			Include []map[string]string `json:"include"`
		} `json:"matrix"`
	}
	if err := json.Unmarshal(matrix.Bytes(), &m); err != nil || len(m.Matrix.Include) != 2 ||
		m.Matrix.Include[0]["artifact"] == m.Matrix.Include[1]["artifact"] {
		t.Errorf("%v %+v", err, m)
	}
	for _, bad := range []string{`{}`, `{"key":"k","legs":[{"key":"other/a"}]}`, `nope`} {
		if _, err := ParseFanOut([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestReportArtifact(t *testing.T) {
	a, b := ReportArtifact("services/shop infra", "prod", "k/1"), ReportArtifact("services/shop infra", "prod", "k/2")
	if a == b || !strings.HasPrefix(a, "cdkbot-report-services-shop-infra-prod-") || strings.ContainsAny(a, `/ "`) {
		t.Errorf("%q %q", a, b)
	}
}

// An app the change removes is listed, and said above the legs: nothing to review, and its stacks
// stay deployed since cdkbot deletes none. It does not block.
func TestFanInRemoved(t *testing.T) {
	net := []apps.App{{Name: "infra/network", Dir: "infra/network", Environments: []apps.Environment{{}}}}
	gone := []apps.App{{Name: "services/users/infra", Dir: "services/users/infra",
		Environments: apps.Environments(map[string][]string{"stage": {"dev", "prod"}})}}
	p := apps.NewPlan("cdk/review", net, apps.Keys{"infra/network": "1", "services/users/infra": "2"},
		apps.Keys{"infra/network": "9"}, "").WithRemoved(append(net, gone...), net)
	f := FanOut{Plan: p, Base: "9f2c1a0b7d4e5f60", Head: "4678020cb0681234"}
	var text, matrix bytes.Buffer
	if err := FanOutText(&text, f); err != nil {
		t.Fatal(err)
	}
	if err := FanOutMatrix(&matrix, f); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/fanin/apps-removed.txt", text.Bytes())
	golden.Assert(t, "testdata/fanin/apps-removed-matrix.json", matrix.Bytes())
	back, err := ParseFanOut(matrix.Bytes())
	if err != nil || len(back.Legs) != 3 || back.Legs[1].Status != apps.Removed {
		t.Fatalf("read back: %v %+v", err, back.Legs)
	}
	c := apps.Combine(back.Plan, "4678020cb068", []apps.Report{
		{Key: "cdk/review/infra/network", HeadSHA: "4678020cb068", Review: []byte(legPassed)}})
	var md, combined bytes.Buffer
	if err := FanInMarkdown(&md, c, 0); err != nil {
		t.Fatal(err)
	}
	if err := FanInText(&combined, c); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/fanin/removed.md", md.Bytes())
	golden.Assert(t, "testdata/fanin/removed.txt", combined.Bytes())
	if h := FanInHeadline(c); !strings.HasPrefix(h, "✅ safe · 3 app environments: 1 reviewed, 2 removed") {
		t.Errorf("headline %q", h)
	}
}

// legRecord is what a leg's report recorded: its comment's marker.
func legRecord(key string, stacks map[string]string) []byte {
	b, _ := json.Marshal(Marker{Tool: "cdkbot", Key: key, HeadSHA: "h", Stacks: stacks})
	return b
}

// The combined comment's marker carries each reviewed leg's record for the deploy of that leg
// when the reports came from the pull request's own run; otherwise none, flagged unverified
// (whatever legs a forged marker lists, none is read). A record of another key than its leg's is
// left out. Past a quarter of the budget the records are pooled into part comments, whose digest
// the marker keeps, and read back whole or not at all.
func TestFanInMarkerRecordsLegs(t *testing.T) {
	envs := []apps.Environment{{Name: "dev"}, {Name: "prod"}}
	p := apps.NewPlan("k", []apps.App{{Name: "a", Dir: "a", Environments: envs}}, apps.Keys{"a": "1"}, apps.Keys{"a": "2"}, "")
	stacks := map[string]string{}
	for i := range 40 {
		stacks[fmt.Sprintf("Stack%02d", i)] = strings.Repeat("x", 120)
	}
	c := apps.Combine(p, "h", []apps.Report{
		{Key: "k/a/dev", HeadSHA: "h", Review: []byte(legPassed), Record: legRecord("k/a/dev", stacks)},
		{Key: "k/a/prod", HeadSHA: "h", Review: []byte(legPassed), Record: legRecord("k/a/dev", stacks)},
	})
	c.Verified = true
	var md bytes.Buffer
	if err := FanInMarkdown(&md, c, 0); err != nil {
		t.Fatal(err)
	}
	legs, ok, err := FanInLegs(md.String(), nil)
	if !ok || err != nil || len(legs) != 1 || legs[0].Key != "k/a/dev" || len(legs[0].Stacks) != 40 {
		t.Fatalf("legs %v %v %d", ok, err, len(legs))
	}
	if m, ok := ParseMarker(md.String()); !ok || m.Key != "k" || m.Unverified {
		t.Errorf("marker %+v", m)
	}
	if parts := FanInIdentityComments(c, 0); len(parts) != 0 {
		t.Errorf("%d identity comments, but the records fit the marker", len(parts))
	}

	// A small comment: the marker keeps the digest, the parts hold the records, joined whole; a
	// part missing or altered is an error, never some of the legs.
	md.Reset()
	if err := FanInMarkdown(&md, c, 16<<10); err != nil {
		t.Fatal(err)
	}
	parts := FanInIdentityComments(c, 16<<10)
	if strings.Contains(md.String(), "Stack00") || strings.Contains(md.String(), `"legs"`) || len(parts) == 0 {
		t.Fatalf("%d parts, and the marker still holds the records", len(parts))
	}
	if legs, ok, err := FanInLegs(md.String(), parts); !ok || err != nil || len(legs) != 1 || legs[0].Key != "k/a/dev" ||
		len(legs[0].Stacks) != 40 || legs[0].HeadSHA != "h" {
		t.Fatalf("joined %v %v %d", ok, err, len(legs))
	}
	for _, broken := range [][]string{nil, {strings.Replace(parts[0], "xxxx", "xxxy", 1)}} {
		if legs, ok, err := FanInLegs(md.String(), broken); !ok || err == nil || legs != nil {
			t.Errorf("parts %d: %v %v %d legs", len(broken), ok, err, len(legs))
		}
	}

	c.Verified = false
	md.Reset()
	if err := FanInMarkdown(&md, c, 0); err != nil {
		t.Fatal(err)
	}
	if m, _ := ParseMarker(md.String()); !m.Unverified || strings.Contains(md.String(), `"legs"`) {
		t.Errorf("a combined review of reports cdkbot cannot verify records its legs: %+v", m.Key)
	}
	if _, ok, _ := FanInLegs(md.String(), nil); ok {
		t.Error("an unverified combined review's legs are read")
	}
	if parts := FanInIdentityComments(c, 16<<10); len(parts) != 0 {
		t.Errorf("%d identity comments for legs the deploy never takes as reviewed", len(parts))
	}
	forged := fanInMarker{Marker: Marker{Tool: "cdkbot", Key: "k", Unverified: true}, Combined: true,
		Legs: []Marker{{Tool: "cdkbot", Key: "k/a/dev", HeadSHA: "h", Stacks: stacks}}}.comment()
	if legs, ok, _ := FanInLegs(forged, nil); ok || len(legs) != 0 {
		t.Errorf("legs read from an unverified combined review: %d", len(legs))
	}
	if _, ok, _ := FanInLegs("<!-- cdkbot:{\"tool\":\"cdkbot\",\"key\":\"k\"} -->", nil); ok {
		t.Error("a review's own marker is not a combined review")
	}
}
