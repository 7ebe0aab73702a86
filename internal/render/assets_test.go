package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

const (
	hashA = "3f1c0a0e8d5b8e2f6f4b0c9a7d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e"
	hashB = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d"
)

// assetTemplates is a stack whose Lambda code, bucket deployment and image change by their asset
// hashes only, beside a function whose memory changes too and a layer whose content replaces it.
func assetTemplates(t *testing.T, hash string, memory int) string {
	t.Helper()
	return fmt.Sprintf(`
		"Handler": {"Type": "AWS::Lambda::Function", "Metadata": {"aws:asset:path": "asset.%[1]s"},
			"Properties": {"Runtime": "nodejs22.x", "Handler": "index.handler", "Role": "arn:aws:iam::1:role/r",
				"Code": {"S3Bucket": "cdk-hnb659fds-assets-1-eu-west-1", "S3Key": "%[1]s.zip"}}},
		"Worker": {"Type": "AWS::Lambda::Function",
			"Properties": {"Runtime": "nodejs22.x", "Handler": "index.handler", "Role": "arn:aws:iam::1:role/r",
				"MemorySize": %[2]d, "Code": {"S3Bucket": "cdk-hnb659fds-assets-1-eu-west-1", "S3Key": "%[1]s.zip"}}},
		"Site": {"Type": "Custom::CDKBucketDeployment", "Properties": {"ServiceToken": "arn:aws:lambda:eu-west-1:1:function:f",
			"SourceBucketNames": ["cdk-hnb659fds-assets-1-eu-west-1"], "SourceObjectKeys": ["%[1]s.zip"]}},
		"Task": {"Type": "AWS::ECS::TaskDefinition", "Properties": {"ContainerDefinitions": [{"Name": "web",
			"Image": {"Fn::Sub": "1.dkr.ecr.eu-west-1.${AWS::URLSuffix}/cdk-hnb659fds-container-assets-1-eu-west-1:%[1]s"}}]}},
		"Layer": {"Type": "AWS::Lambda::LayerVersion",
			"Properties": {"Content": {"S3Bucket": "cdk-hnb659fds-assets-1-eu-west-1", "S3Key": "%[1]s.zip"}}},
		"Queue": {"Type": "AWS::SQS::Queue"}`, hash, memory)
}

func assetReport(t *testing.T, show bool) *review.Report {
	t.Helper()
	api := cfndiff.DiffTemplates("Api", template(t, assetTemplates(t, hashA, 256)),
		template(t, assetTemplates(t, hashB, 512)), cfndiff.Options{})
	quiet := template(t, `"Topic": {"Type": "AWS::SNS::Topic"}`)
	web := cfndiff.DiffTemplates("Web", quiet, quiet, cfndiff.Options{})
	return &review.Report{Key: "k", Stacks: []*cfndiff.StackDiff{api, web}, ShowAssetChanges: show}
}

// Asset-hash-only updates are counted in one line per stack (the names of the first few); a
// function whose memory changes too, and a layer and a task definition their new content
// replaces, are listed as ever.
// asset-changes: show lists them all.
func TestAssetChangesFold(t *testing.T) {
	t.Parallel()
	for _, show := range []bool{false, true} {
		rep := assetReport(t, show)
		var md, text bytes.Buffer
		if err := ReviewMarkdown(&md, rep, 0); err != nil {
			t.Fatal(err)
		}
		if err := ReviewText(&text, rep, DiffOptions{}); err != nil {
			t.Fatal(err)
		}
		name := map[bool]string{false: "assets-folded", true: "assets-shown"}[show]
		golden.Assert(t, "testdata/review/"+name+".md", md.Bytes())
		golden.Assert(t, "testdata/review/"+name+".txt", text.Bytes())
		assertBalanced(t, md.String())
		folded := strings.Contains(md.String(), "2 assets changed: only their asset hashes changed")
		if folded == show || strings.Contains(md.String(), "| ~ | <code>Handler</code> |") == !show {
			t.Errorf("show %v:\n%s", show, md.String())
		}
		for _, listed := range []string{"<code>Worker</code>", "<code>Layer</code>", "<code>Task</code>"} {
			if !strings.Contains(md.String(), listed) {
				t.Errorf("show %v: %s is not listed", show, listed)
			}
		}
	}
}

// What counts as an asset-hash-only change, one resource at a time.
func TestAssetOnly(t *testing.T) {
	t.Parallel()
	fn := func(code, extra string) string {
		return `"F": {"Type": "AWS::Lambda::Function", "Properties": {"Code": ` + code + extra + `}}`
	}
	key := func(h string) string { return `{"S3Bucket": "b", "S3Key": "` + h + `.zip"}` }
	for _, tc := range []struct {
		name     string
		old, new string
		want     bool
	}{
		{"the code's hash", fn(key(hashA), ""), fn(key(hashB), ""), true},
		{"the hash and the memory", fn(key(hashA), ""), fn(key(hashB), `, "MemorySize": 512`), false},
		{"the bucket", fn(key(hashA), ""), fn(`{"S3Bucket": "other", "S3Key": "`+hashA+`.zip"}`, ""), false},
		{"a key without a hash", fn(`{"S3Bucket": "b", "S3Key": "v1.zip"}`, ""), fn(`{"S3Bucket": "b", "S3Key": "v2.zip"}`, ""),
			false},
		{"a hash replaced by text", fn(key(hashA), ""), fn(key("latest"), ""), false},
		{"a short hexadecimal value", fn(key("abc123"), ""), fn(key("def456"), ""), false},
		{"a new resource", `"Q": {"Type": "AWS::SQS::Queue"}`, `"Q": {"Type": "AWS::SQS::Queue"}, ` + fn(key(hashA), ""), false},
	} {
		d := cfndiff.DiffTemplates("S", template(t, tc.old), template(t, tc.new), cfndiff.Options{})
		got := false
		for _, r := range d.Diff.Resources {
			if r.LogicalID == "F" {
				got = AssetOnly(r)
			}
		}
		if got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Compatibility checks that all pass take one line; otherwise the table shows GitHub's glyphs and
// the commands in a finding or an action as code, not as backticks.
func TestCompatMarkdownGolden(t *testing.T) {
	t.Parallel()
	var pass, mixed bytes.Buffer
	if err := CompatMarkdown(&pass, []compat.Check{{Name: "toolkit", Status: compat.Pass, Finding: "readable"},
		{Name: "mode", Status: compat.Pass, Finding: "unchanged"}}); err != nil {
		t.Fatal(err)
	}
	if pass.String() != "#### Compatibility: pass · 2 checks pass\n" {
		t.Errorf("all pass: %q", pass.String())
	}
	if err := CompatMarkdown(&mixed, []compat.Check{
		{Name: "toolkit", Status: compat.Pass, Finding: "schema 55.0.0 is readable"},
		{Name: "bootstrap aws://123456789012/eu-west-1", Status: compat.Warn, Finding: "needs bootstrap version ≥ 30",
			Action: "Run `cdk bootstrap aws://123456789012/eu-west-1` before merging"},
		{Name: "cli", Status: compat.Fail, Finding: "the pinned `aws-cdk` 2.1000.0 cannot read schema 55",
			Action: "Upgrade with `npm i -D aws-cdk@latest` | or ` unpaired"},
	}); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/compat/mixed.md", mixed.Bytes())
	if strings.Contains(mixed.String(), "\\`cdk") || strings.Contains(mixed.String(), "\\`npm") ||
		strings.Contains(mixed.String(), "| ! |") {
		t.Errorf("escaped backticks or a bare !:\n%s", mixed.String())
	}
}

// A long JSON value can wrap in its table cell: a line-break opportunity after each comma, and
// nothing else changes in what is shown or copied.
func TestLongValuesWrap(t *testing.T) {
	t.Parallel()
	got := mdValue(`{"CidrIp":"0.0.0.0/0","Description":"public https","FromPort":443}`, 0)
	want := "<code>{&quot;CidrIp&quot;:&quot;0.0.0.0/0&quot;,<wbr>&quot;Description&quot;:&quot;public https&quot;,<wbr>" +
		"&quot;FromPort&quot;:443}</code>"
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if short := mdValue(`{"a":1,"b":2}`, 0); short != `<code>{&quot;a&quot;:1,&quot;b&quot;:2}</code>` {
		t.Errorf("a short value: %s", short)
	}
}
