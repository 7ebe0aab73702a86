package assembly

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// symlink marks a file map value as a symbolic link to the given target.
type symlink string

// writeTree creates files (string contents) and symlinks under a new temp dir and returns it.
func writeTree(t *testing.T, files map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch c := v.(type) {
		case string:
			if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		case symlink:
			if err := os.Symlink(string(c), p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// modern returns the files of a small valid modern-mode assembly; tests override entries.
func modern() map[string]any {
	return map[string]any{
		"manifest.json": `{
  "version": "55.0.0",
  "artifacts": {
    "App.assets": {"type": "cdk:asset-manifest", "properties": {"file": "App.assets.json"}},
    "App": {
      "type": "aws:cloudformation:stack",
      "environment": "aws://123456789012/cn-north-1",
      "dependencies": ["App.assets"],
      "properties": {"templateFile": "App.template.json", "assumeRoleArn": "arn:${AWS::Partition}:iam::123456789012:role/deploy"}
    },
    "Tree": {"type": "cdk:tree", "properties": {"file": "tree.json"}}
  }
}`,
		"App.template.json": `{"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}`,
		"tree.json":         `{"version": "tree-0.1", "tree": {"id": "App", "path": "", "constructInfo": {"fqn": "aws-cdk-lib.App", "version": "2.300.0"}}}`,
		"App.assets.json": `{
  "version": "55.0.0",
  "files": {
    "abc": {
      "source": {"path": "asset.abc", "packaging": "zip"},
      "destinations": {"d": {"bucketName": "b-${AWS::AccountId}-${AWS::Region}", "objectKey": "abc.zip",
        "assumeRoleArn": "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/pub"}}
    }
  },
  "dockerImages": {}
}`,
		"asset.abc/index.js": "exports.handler = 1;",
	}
}

func with(base map[string]any, changes map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

func load(t *testing.T, files map[string]any) (*Assembly, error) {
	t.Helper()
	dir := writeTree(t, files)
	return Load(os.DirFS(dir), "cdk.out")
}

func TestLoadModernAssembly(t *testing.T) {
	t.Parallel()
	a, err := load(t, modern())
	if err != nil {
		t.Fatal(err)
	}
	if a.Mode() != ModeModern {
		t.Errorf("mode %s, want 2.0", a.Mode())
	}
	if fw := a.Framework(); fw.String() != "aws-cdk-lib 2.300.0" {
		t.Errorf("framework %q", fw)
	}
	s := a.Stacks[0]
	if s.StackName != "App" || s.DisplayName != "App" || s.Environment.Region != "cn-north-1" {
		t.Errorf("stack defaults: %+v", s)
	}
	d := a.AssetManifests[0].Files[0].Destinations[0].Resolved(s.Environment)
	if d.BucketName != "b-123456789012-cn-north-1" || d.AssumeRoleARN != "arn:aws-cn:iam::123456789012:role/pub" {
		t.Errorf("placeholders not resolved for the environment: %+v", d)
	}
	if len(a.Warnings) != 0 {
		t.Errorf("unexpected warnings: %v", a.Warnings)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files map[string]any
		// every string must appear in the error message
		want []string
	}{
		{"malformed JSON", with(modern(), map[string]any{"manifest.json": "{\n  \"version\": \"55.0.0\",\n  \"artifacts\": {,}\n}"}),
			[]string{"cdk.out/manifest.json", "line 3, column 17", "malformed JSON"}},
		{"truncated JSON", with(modern(), map[string]any{"manifest.json": `{"version": "55.0.0", "artifacts": {`}),
			[]string{"cdk.out/manifest.json", "ends before the JSON value does"}},
		{"missing manifest", with(modern(), map[string]any{"manifest.json": nil}),
			[]string{"cdk.out/manifest.json", "not a cloud assembly", "cdk synth"}},
		{"empty directory", map[string]any{}, []string{"cdk.out", "directory is empty", "cdk synth"}},
		{"schema violation", with(modern(), map[string]any{"manifest.json": `{"version": "55.0.0", "artifacts": {"App": {"type": "aws:cloudformation:stack", "properties": {"templateFile": 7}}}}`}),
			[]string{"cdk.out/manifest.json", "/artifacts/App/properties/templateFile", "want string"}},
		{"missing version", with(modern(), map[string]any{"manifest.json": `{"artifacts": {}}`}),
			[]string{"cdk.out/manifest.json", "missing property 'version'"}},
		{"version not semver", with(modern(), map[string]any{"manifest.json": `{"version": "latest"}`}),
			[]string{"/version", `"latest" is not a semantic version`}},
		{"bad environment", with(modern(), map[string]any{"manifest.json": `{"version": "55.0.0", "artifacts": {"App": {"type": "aws:cloudformation:stack", "environment": "123/us-east-1", "properties": {"templateFile": "App.template.json"}}}}`}),
			[]string{"/artifacts/App/environment", "aws://ACCOUNT/REGION"}},
		{"asset source with ..", with(modern(), map[string]any{"App.assets.json": strings.Replace(modern()["App.assets.json"].(string), `"asset.abc"`, `"../../etc"`, 1)}),
			[]string{"cdk.out/App.assets.json", "/files/abc/source/path", "leads outside the assembly"}},
		{"absolute asset path", with(modern(), map[string]any{"App.assets.json": strings.Replace(modern()["App.assets.json"].(string), `"asset.abc"`, `"/etc/passwd"`, 1)}),
			[]string{"/files/abc/source/path", "absolute path"}},
		{"nested assemblies pointing at their own directory", with(modern(), map[string]any{"manifest.json": `{"version": "55.0.0", "artifacts": {"A": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "."}}, "B": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "."}}}}`}),
			[]string{"cdk.out/manifest.json", "reached twice through nested-assembly artifacts", "a directory of its own"}},
		{"artifacts twice", with(modern(), map[string]any{"manifest.json": `{"version": "55.0.0", "artifacts": {}, "artifacts": {"App": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "App.template.json"}}}}`}),
			[]string{"cdk.out/manifest.json", "/artifacts (line 1, column", "the key appears twice in its object"}},
		{"30-digit bootstrap version", with(modern(), map[string]any{"manifest.json": `{"version": "55.0.0", "artifacts": {"App": {"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1", "properties": {"templateFile": "App.template.json", "requiresBootstrapStackVersion": 123456789012345678901234567890}}}}`}),
			[]string{"cdk.out/manifest.json", "/artifacts/App/properties/requiresBootstrapStackVersion", "is not a bootstrap version"}},
		{"asset is a symlink leaving the assembly", with(modern(), map[string]any{"asset.abc/index.js": nil, "asset.abc": symlink("/etc")}),
			[]string{"/files/abc/source/path", "symbolic link", "outside the assembly"}},
		{"relative symlink leaving the assembly", with(modern(), map[string]any{"asset.abc/index.js": nil, "asset.abc": symlink("../..")}),
			[]string{"/files/abc/source/path", "points outside the assembly"}},
		{"symlink inside an asset directory", with(modern(), map[string]any{"asset.abc/secrets": symlink("/root/.aws")}),
			[]string{"/files/abc/source/path", "unsafe asset directory", "outside the assembly"}},
		{"missing asset source", with(modern(), map[string]any{"asset.abc/index.js": nil}),
			[]string{"/files/abc/source/path", `asset source "asset.abc" does not exist`}},
		{"dependency on a missing artifact", with(modern(), map[string]any{"manifest.json": strings.Replace(modern()["manifest.json"].(string), `["App.assets"]`, `["App.assets", "Nope"]`, 1)}),
			[]string{"/artifacts/App/dependencies/1", `depends on "Nope"`}},
		{"dependency cycle", with(modern(), map[string]any{"manifest.json": `{"version": "55.0.0", "artifacts": {
			"A": {"type": "aws:cloudformation:stack", "dependencies": ["B"], "properties": {"templateFile": "App.template.json"}},
			"B": {"type": "aws:cloudformation:stack", "dependencies": ["C"], "properties": {"templateFile": "App.template.json"}},
			"C": {"type": "aws:cloudformation:stack", "dependencies": ["A"], "properties": {"templateFile": "App.template.json"}}}}`}),
			[]string{"dependency cycle: A → B → C → A"}},
		{"missing template file", with(modern(), map[string]any{"App.template.json": nil}),
			[]string{"cdk.out/manifest.json", "/artifacts/App/properties/templateFile", `template file "App.template.json" does not exist`}},
		{"nested assembly escaping", with(modern(), map[string]any{"manifest.json": `{"version": "55.0.0", "artifacts": {"assembly-Prod": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "../elsewhere"}}}}`}),
			[]string{"/artifacts/assembly-Prod/properties/directoryName", "leads outside the assembly"}},
		{"legacy asset metadata escaping", with(modern(), map[string]any{"manifest.json": `{"version": "5.0.0", "artifacts": {"App": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "App.template.json"},
			"metadata": {"/App": [{"type": "aws:cdk:asset", "data": {"path": "../../home", "id": "x", "packaging": "zip", "sourceHash": "x",
			"s3BucketParameter": "a", "s3KeyParameter": "b", "artifactHashParameter": "c"}}]}}}}`}),
			[]string{"/artifacts/App/metadata/~1App/0/data/path", "leads outside the assembly"}},
		{"broken asset manifest", with(modern(), map[string]any{"App.assets.json": `{"version": "55.0.0", "files": {"abc": {"source": {"path": "asset.abc"}}}}`}),
			[]string{"cdk.out/App.assets.json", "/files/abc", "missing property 'destinations'"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, tc.files)
			if err == nil {
				t.Fatal("loaded without error")
			}
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %T is not an *assembly.Error: %v", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	t.Parallel()
	files := with(modern(), map[string]any{"manifest.json": strings.Replace(modern()["manifest.json"].(string), `"55.0.0"`, `"56.0.0"`, 1) +
		"\n"})
	// Fields a newer schema might add must not matter: the gate runs before validation.
	files["manifest.json"] = strings.Replace(files["manifest.json"].(string), `"artifacts"`, `"brandNew": 1, "artifacts"`, 1)
	_, err := load(t, files)
	var tooNew *TooNewError
	if !errors.As(err, &tooNew) {
		t.Fatalf("want *TooNewError, got %T: %v", err, err)
	}
	msg := tooNew.Message("0.4.0")
	for _, w := range []string{"cdk.out was synthesized with cloud assembly schema 56.0.0 (aws-cdk-lib 2.300.0)",
		"cdkbot 0.4.0 reads schema up to 55.x", "Upgrade cdkbot"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message lacks %q:\n%s", w, msg)
		}
	}
}

func TestOlderSchemasAlwaysLoad(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0.36.0", "1.16.0", "9.0.0", "36.0.0", "55.99.0"} {
		files := with(modern(), map[string]any{"manifest.json": strings.Replace(modern()["manifest.json"].(string), `"55.0.0"`, `"`+v+`"`, 1)})
		if _, err := load(t, files); err != nil {
			t.Errorf("schema %s: %v", v, err)
		}
	}
}

func TestUnknownArtifactTypeIsAWarning(t *testing.T) {
	t.Parallel()
	files := with(modern(), map[string]any{"manifest.json": strings.Replace(modern()["manifest.json"].(string),
		`"Tree": {`, `"Future": {"type": "cdk:hologram", "properties": {"anything": [1, 2]}}, "Tree": {`, 1)})
	a, err := load(t, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0].String(), `"cdk:hologram"`) || a.Warnings[0].Pointer != "/artifacts/Future/type" {
		t.Fatalf("warnings %v", a.Warnings)
	}
	if len(a.Others) != 1 || a.Others[0].Type != "cdk:hologram" {
		t.Errorf("unknown artifact not kept: %+v", a.Others)
	}
}

func TestSymlinkInsideTheAssemblyIsAllowed(t *testing.T) {
	t.Parallel()
	files := with(modern(), map[string]any{"shared/lib.js": "x", "asset.abc/lib.js": symlink("../shared/lib.js")})
	if _, err := load(t, files); err != nil {
		t.Fatal(err)
	}
}

func TestMissingContextWarns(t *testing.T) {
	t.Parallel()
	files := with(modern(), map[string]any{"manifest.json": strings.Replace(modern()["manifest.json"].(string), `"artifacts"`,
		`"missing": [{"key": "vpc-provider:account=1", "provider": "vpc-provider", "props": {"account": "1", "region": "r", "filter": {}}}], "artifacts"`, 1)})
	a, err := load(t, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Missing) != 1 || len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0].Message, "must not be deployed") {
		t.Fatalf("missing %v warnings %v", a.Missing, a.Warnings)
	}
}

func TestTemplateIsParsedLazily(t *testing.T) {
	t.Parallel()
	files := with(modern(), map[string]any{"App.template.json": `{"Resources": `})
	a, err := load(t, files)
	if err != nil {
		t.Fatalf("load must not parse templates: %v", err)
	}
	_, err = a.Stacks[0].Template()
	if err == nil || !strings.Contains(err.Error(), "App.template.json") {
		t.Fatalf("broken template error should name the file: %v", err)
	}
}

func TestEnvironment(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Environment{
		"aws://123456789012/us-east-1":         {"123456789012", "us-east-1"},
		"aws://unknown-account/unknown-region": {UnknownAccount, UnknownRegion},
	} {
		got, err := ParseEnvironment(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("%s: %+v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "aws://", "aws://1", "aws://1/", "aws:///r", "http://1/r", "aws://1/r/x"} {
		if _, err := ParseEnvironment(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	agnostic := Environment{UnknownAccount, UnknownRegion}
	if got := ResolvePlaceholders("arn:${AWS::Partition}:iam::${AWS::AccountId}:x", agnostic); got != "arn:${AWS::Partition}:iam::${AWS::AccountId}:x" {
		t.Errorf("unknown environment must leave placeholders: %s", got)
	}
	for region, part := range map[string]string{"us-east-1": "aws", "cn-north-1": "aws-cn", "us-gov-west-1": "aws-us-gov",
		"us-iso-east-1": "aws-iso", "us-isob-east-1": "aws-iso-b"} {
		if got := PartitionOf(region); got != part {
			t.Errorf("%s: %s, want %s", region, got, part)
		}
	}
}

// asAny reports whether err (possibly joined) holds an *Error or a *TooNewError.
func asAny(err error, ae **Error, tn **TooNewError) bool {
	return errors.As(err, ae) || errors.As(err, tn)
}

func TestDuplicateKeyPointer(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"a": 1, "b": {"c": [1, {"d": 1, "d": 2}]}}`: "/b/c/1/d",
		`{"a/b": {"x": 1}, "a/b": 2}`:                 "/a~1b",
		`{"a": [{"k": 1}, {"k": 2}], "b": {"k": 3}}`:  "",
	} {
		_, err := decodeGeneric("f.json", []byte(in))
		var ae *Error
		ptr := ""
		if errors.As(err, &ae) {
			ptr, _, _ = strings.Cut(ae.Issues[0].Pointer, " (line 1, column ")
		}
		if ptr != want || (err != nil) != (want != "") {
			t.Errorf("%s: %q %v, want %q", in, ptr, err, want)
		}
	}
}

// Metadata is read on first use: a damaged metadata file does not stop the load, and cannot go
// unnoticed either: the stack is incomplete, saying why; a legacy asset whose source leaves the
// assembly is never returned, wherever it is written.
func TestMetadataIsReadOnFirstUse(t *testing.T) {
	t.Parallel()
	manifest := strings.Replace(modern()["manifest.json"].(string), `"dependencies": ["App.assets"],`,
		`"dependencies": ["App.assets"], "additionalMetadataFile": "App.metadata.json",
      "metadata": {"/App/Queue": [{"type": "aws:cdk:logicalId", "data": "Queue1"}]},`, 1)
	for name, tc := range map[string]struct {
		file       string
		wantErr    string
		logicalIDs int
	}{
		"good": {`{"/App/Topic": [{"type": "aws:cdk:logicalId", "data": "Topic2", "trace": ["at x"]}]}`, "", 2},
		"repeated key": {`{"/App/Topic": [{"type": "aws:cdk:logicalId", "data": "Topic2", "data": "Other"}]}`,
			"/~1App~1Topic/0/data (line 1, column", 1},
		"escaping asset": {`{"/App/Old": [{"type": "aws:cdk:\u0061sset", "data": {"path": "../../etc", "id": "x", "packaging": "zip",
			"sourceHash": "x", "s3BucketParameter": "a", "s3KeyParameter": "b", "artifactHashParameter": "c"}}]}`, "leads outside the assembly", 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a, err := load(t, with(modern(), map[string]any{"manifest.json": manifest, "App.metadata.json": tc.file}))
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			s := a.Stacks[0]
			_, err = s.MetadataEntries()
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("metadata error %v, want %q", err, tc.wantErr)
			}
			if got := s.LogicalIDs(); len(got) != tc.logicalIDs || got["/App/Queue"] != "Queue1" {
				t.Errorf("logical ids %v", got)
			}
			if len(s.LegacyAssets()) != 0 {
				t.Errorf("legacy assets %v", s.LegacyAssets())
			}
			if why := a.Incomplete(s); (len(why) != 0) != (tc.wantErr != "") {
				t.Errorf("incomplete: %q", why)
			}
		})
	}
}
