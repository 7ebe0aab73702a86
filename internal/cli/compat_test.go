package cli

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// publishedSchema writes the real published schema of a @aws-cdk/cloud-assembly-schema version
// (from compat's vendored history) to dir and returns its path.
func publishedSchema(t *testing.T, dir, version string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "compat", "history", version+".schema.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, version+".schema.json", string(raw))
}

func TestCompatCommands(t *testing.T) {
	dir := t.TempDir()
	s53, s54 := publishedSchema(t, dir, "53.0.0"), publishedSchema(t, dir, "54.0.0")
	dangling := writeFile(t, dir, "dangling.json", `{"$ref": "#/definitions/Gone"}`)
	notJSON := writeFile(t, dir, "bad.json", `{`)
	cases := []cliCase{
		{"schema under-bumped", []string{"compat", "schema", s53, s54, "--declared-old", "53.0.0", "--declared-new", "53.1.0"}, ExitVerdict,
			[]string{"required bump: major", "under-bumped"}, nil},
		{"schema ok", []string{"compat", "schema", s53, s54, "--declared-old", "53.0.0", "--declared-new", "54.0.0"}, ExitOK, []string{": ok"}, nil},
		{"schema no declared versions", []string{"compat", "schema", s53, s53}, ExitOK, []string{"0 change(s); required bump: none"}, nil},
		{"schema json", []string{"compat", "schema", s53, s54, "--format", "json"}, ExitOK, []string{`"requiredBump": "major"`, `"verdict": null`}, nil},
		{"dangling ref", []string{"compat", "schema", s53, dangling}, ExitUsage, nil, []string{"new schema", `"#/definitions/Gone" names a definition that does not exist`}},
		{"not JSON", []string{"compat", "schema", notJSON, s53}, ExitUsage, nil, []string{"bad.json: not valid JSON"}},
		{"half the declared pair", []string{"compat", "schema", s53, s54, "--declared-old", "1.0.0"}, ExitUsage, nil, []string{"go together"}},
		{"spec", []string{"compat", "spec", ">=1.2,<2.0,!=1.5.0", "1.0.0", "1.2.0", "1.5.0", "1.9.0", "2.0.0"}, ExitOK, []string{"2 of 5", "latest: 1.9.0"}, nil},
		{"bad spec", []string{"compat", "spec", ">=1.2,,<2", "1.0.0"}, ExitUsage, nil, []string{"comparator 2 is empty"}},
		{"bad version", []string{"compat", "spec", "1", "1.x"}, ExitUsage, nil, []string{`"1.x" is not a semantic version`}},
		{"resolve same minor", []string{"compat", "resolve", "1.2.9", "1.2.0", "1.2.3", "1.4.0"}, ExitOK, []string{"1.2.3 (same-minor match for 1.2.9)"}, nil},
		{"resolve none", []string{"compat", "resolve", "3.0.0", "1.2.0"}, ExitVerdict, nil, []string{"no available version matches 3.0.0"}},
		{"matrix", []string{"compat", "matrix"}, ExitOK, []string{"Run `cdk bootstrap aws://ACCOUNT/REGION`", "[decided by cdkbot]"}, nil},
		{"matrix json", []string{"compat", "matrix", "--format", "json"}, ExitOK, []string{`"mode": "error"`, `"decidedByCdkbot": true`}, nil},
	}
	runCases(t, cases)
	_, out, _ := run(t, "compat", "resolve", "1.3.0", "1.2.0", "1.5.2", "2.0.0", "--format", "json")
	var r struct {
		Wanted, Rule string
		Resolved     *string
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Rule != "same-major" || r.Resolved == nil || *r.Resolved != "1.5.2" {
		t.Errorf("resolve json: %s (%v)", out, err)
	}
}

func TestCompatAssemblyCommand(t *testing.T) {
	repo := t.TempDir()
	writeFile(t, repo, "package.json", `{"devDependencies": {"aws-cdk": "^2.1000.0"}}`)
	writeFile(t, repo, "cdk.json", `{"app": "node app.js", "context": {"@aws-cdk/core:newStyleStackSynthesis": false}}`)
	locked := t.TempDir()
	writeFile(t, locked, "package.json", `{"devDependencies": {"aws-cdk": "^2.1000.0"}}`)
	writeFile(t, locked, "package-lock.json", `{"lockfileVersion": 3, "packages": {"node_modules/aws-cdk": {"version": "2.1150.0"}}}`)
	broken := t.TempDir()
	writeFile(t, broken, "cdk.json", `{"context": `)
	base, head := fixture(t, "aws-cdk-lib@2.200.0/multi-env"), fixture(t, "aws-cdk-lib@2.276.0/multi-env")
	v1 := fixture(t, "aws-cdk-core@1.204.0/multi-env")
	cases := []cliCase{
		{"outdated CLI fails", []string{"compat", "assembly", base, head, "--repo", repo}, ExitVerdict,
			[]string{"✗ fail  cli", "aws-cdk 2.1000.0 (package.json)", "Upgrade aws-cdk to ≥ 2.1148.2 in package.json", "compatibility: fail"}, nil},
		{"lock file wins", []string{"compat", "assembly", base, head, "--repo", locked}, ExitOK, []string{"aws-cdk 2.1150.0 satisfies", "compatibility: pass"}, nil},
		{"v1 to v2 warns", []string{"compat", "assembly", v1, head, "--format", "markdown"}, ExitOK,
			[]string{"#### Compatibility: warn", "legacy \\(1.0\\) to modern \\(2.0\\)"}, nil},
		{"json", []string{"compat", "assembly", base, head, "--format", "json"}, ExitOK, []string{`"status": "pass"`, `"name": "framework"`}, nil},
		{"broken cdk.json", []string{"compat", "assembly", base, head, "--repo", broken}, ExitUsage, nil, []string{"cdk.json: not valid JSON"}},
	}
	runCases(t, cases)
}
