package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func fixture(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", "compat-fixtures", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// copyDir copies a fixture so a test can damage it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := os.CopyFS(dst, os.DirFS(src))
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestExitCodes(t *testing.T) {
	modern := fixture(t, "aws-cdk-lib@2.276.0/multi-env")

	tooNew := copyDir(t, modern)
	manifest := filepath.Join(tooNew, "manifest.json")
	b, _ := os.ReadFile(manifest)
	os.WriteFile(manifest, bytes.Replace(b, []byte(`"version": "55.0.0"`), []byte(`"version": "56.0.0"`), 1), 0o644)

	broken := copyDir(t, modern)
	os.WriteFile(filepath.Join(broken, "manifest.json"), []byte(`{"version": "55.0.0", "artifacts": {`), 0o644)

	cases := []struct {
		name string
		args []string
		code int
		want []string // in stderr
	}{
		{"ok", []string{"inspect", modern}, ExitOK, nil},
		{"unknown command", []string{"frobnicate"}, ExitUsage, []string{"unknown command", "cdkbot --help"}},
		{"unknown flag", []string{"inspect", modern, "--colour"}, ExitUsage, []string{"unknown flag: --colour"}},
		{"bad format", []string{"inspect", modern, "--format", "yaml"}, ExitUsage, []string{"must be one of [text json]"}},
		{"missing argument", []string{"inspect"}, ExitUsage, []string{"takes one argument, the cloud assembly directory"}},
		{"no such directory", []string{"inspect", filepath.Join(t.TempDir(), "cdk.out")}, ExitUsage, []string{"no such directory"}},
		{"a file, not a directory", []string{"inspect", manifest}, ExitUsage, []string{"is a file"}},
		{"malformed manifest", []string{"inspect", broken}, ExitUsage, []string{"manifest.json", "line 1", "malformed JSON"}},
		{"schema too new", []string{"inspect", tooNew}, ExitTooOld, []string{
			"was synthesized with cloud assembly schema 56.0.0 (aws-cdk-lib 2.276.0)", "reads schema up to 55.x", "Upgrade cdkbot"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "version")
	if code != 0 || !strings.Contains(out, "reads every version up to 55.x") || !strings.Contains(out, "@aws-cdk/cloud-assembly-schema@55.6.0") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = run(t, "version", "--format", "json")
	var v struct {
		Version        string `json:"version"`
		SchemaMaxMajor int    `json:"schemaMaxMajor"`
	}
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v.SchemaMaxMajor != 55 || v.Version == "" {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
}

// cliCase is one command line with the exit code and output fragments it must produce.
type cliCase struct {
	name   string
	args   []string
	code   int
	stdout []string
	stderr []string
}

func runCases(t *testing.T, cases []cliCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}
