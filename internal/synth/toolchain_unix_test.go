//go:build unix

package synth

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A Python app (requirements.txt) is installed into .venv and runs with it, as `cdk init
// --language python` sets it up; no network is needed for an empty requirements file.
func TestPythonAppRunsInItsVirtualEnvironment(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	if err := exec.Command("python3", "-c", "import venv, ensurepip").Run(); err != nil {
		t.Skip("python3 has no venv/ensurepip")
	}
	dir := t.TempDir()
	files := map[string]string{
		"cdk.json":         `{"app": "python3 app.py"}`,
		"requirements.txt": "# aws-cdk-lib would be here; none needed to write an assembly\n",
		"app.py": `import json, os, sys
out = os.environ["CDK_OUTDIR"]
json.dump({"version": "36.0.0", "artifacts": {"App": {"type": "aws:cloudformation:stack",
  "environment": "aws://123456789012/us-east-1", "properties": {"templateFile": "App.template.json"}}}},
  open(os.path.join(out, "manifest.json"), "w"))
json.dump({"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}, open(os.path.join(out, "App.template.json"), "w"))
print("python prefix: " + sys.prefix)
`,
	}
	for name, content := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	var log strings.Builder
	out := filepath.Join(t.TempDir(), "cdk.out")
	if err := Run(context.Background(), Options{Dir: dir, OutDir: out, Env: os.Environ(), Log: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "python3 -m venv .venv") || !strings.Contains(log.String(), "python prefix: "+filepath.Join(dir, ".venv")) {
		t.Errorf("not run in the app's venv:\n%s", log.String())
	}
	if _, err := os.Stat(filepath.Join(out, "App.template.json")); err != nil {
		t.Error(err)
	}
}

// An app whose toolchain this environment lacks fails before anything runs, naming the
// language, the file that told, the missing program and what to do.
func TestMissingToolchainSaysWhatToDo(t *testing.T) {
	bin := t.TempDir() // a PATH with sh and nothing else
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	os.Symlink(sh, filepath.Join(bin, "sh"))
	env := []string{"PATH=" + bin, "HOME=" + t.TempDir()}
	for _, tc := range []struct {
		files map[string]string
		want  []string
	}{
		{map[string]string{"pom.xml": "<project/>", "cdk.json": `{"app": "mvn -e -q compile exec:java"}`}, []string{"Java (Maven) app (pom.xml)", "mvn is not on PATH", "setup action", "actions/setup-java"}},
		{map[string]string{"go.mod": "module app", "cdk.json": `{"app": "go mod download && go run app.go"}`}, []string{"Go app (go.mod)", "go is not on PATH"}},
		{map[string]string{"src/App/App.csproj": "<Project/>", "cdk.json": `{"app": "dotnet run --project src/App/App.csproj"}`}, []string{"C#/F# (.NET) app (src/App/App.csproj)", "dotnet is not on PATH"}},
		{map[string]string{"poetry.lock": "", "cdk.json": `{"app": "python3 app.py"}`}, []string{"Python (poetry) app (poetry.lock)", "poetry is not on PATH"}},
		{map[string]string{"package-lock.json": "{}", "cdk.json": `{"app": "npx ts-node bin/app.ts"}`}, []string{"JavaScript/TypeScript (npm) app (package-lock.json)", "npm is not on PATH"}},
		{map[string]string{"cdk.json": `{"app": "deno run app.ts"}`}, []string{"CDK app (cdk.json)", "deno is not on PATH"}},
	} {
		dir := t.TempDir()
		for name, content := range tc.files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(content), 0o644)
		}
		var log strings.Builder
		err := Run(context.Background(), Options{Dir: dir, OutDir: filepath.Join(t.TempDir(), "o"), Env: env, Log: &log})
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want %q", tc.files, err, w)
			}
		}
		if log.Len() != 0 {
			t.Errorf("%v: something ran: %s", tc.files, log.String())
		}
	}
}
