package synth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each kind of CDK app is recognised by the file its project keeps.
func TestDetectToolchain(t *testing.T) {
	for files, want := range map[string]string{
		"package-lock.json":                  "JavaScript/TypeScript (npm)",
		"yarn.lock":                          "JavaScript/TypeScript (yarn)",
		"pnpm-lock.yaml":                     "JavaScript/TypeScript (pnpm)",
		"requirements.txt":                   "Python (pip)",
		"poetry.lock":                        "Python (poetry)",
		"Pipfile.lock":                       "Python (pipenv)",
		"pom.xml":                            "Java (Maven)",
		"go.mod":                             "Go",
		"src/Infra/Infra.csproj":             "C#/F# (.NET)",
		"src/Infra.sln":                      "C#/F# (.NET)",
		"package.json":                       "",
		"requirements.txt package-lock.json": "JavaScript/TypeScript (npm)", // a Python app with a JS tool: the lock file decides
	} {
		dir := t.TempDir()
		for _, f := range strings.Fields(files) {
			p := filepath.Join(dir, filepath.FromSlash(f))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, nil, 0o644)
		}
		tc, marker := detect(dir)
		got := ""
		if tc != nil {
			got = tc.language
		}
		if got != want || (tc != nil && marker == "") {
			t.Errorf("%s: %q (%s), want %q", files, got, marker, want)
		}
	}
}

func TestFirstProgram(t *testing.T) {
	for cmd, want := range map[string]string{
		"npx ts-node --prefer-ts-exts bin/app.ts": "npx",
		"python3 app.py":              "python3",
		"FOO=1 BAR=2 node app.js":     "node",
		"mvn -e -q compile exec:java": "mvn",
		"(cd src && node app.js)":     "",
		`"my tool" app`:               "",
		"./gradlew run":               "./gradlew",
	} {
		if got := firstProgram(cmd); got != want {
			t.Errorf("%q: %q, want %q", cmd, got, want)
		}
	}
}
