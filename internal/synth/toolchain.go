package synth

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// toolchain is what one kind of CDK app needs: the file that marks it, how its dependencies
// are installed, and the program that must be on PATH.
type toolchain struct {
	language string   // for messages: "Python (pip)"
	markers  []string // files (globs) in the app's directory that say the app is of this kind
	tool     string   // the program the install (or the app's own command) needs
	install  string   // the install command; "" when the app's command builds it (mvn, go, dotnet)
	nodeLock bool     // node_modules may be cached by this lock file
	venv     bool     // Python: installed into .venv, and the app runs with it
}

// toolchains in the order a directory is matched: lock files first (they pin dependencies the way
// teams do), then project files.
var toolchains = []toolchain{
	{language: "JavaScript/TypeScript (npm)", markers: []string{"package-lock.json", "npm-shrinkwrap.json"}, tool: "npm",
		install: "npm ci --no-audit --no-fund", nodeLock: true},
	{language: "JavaScript/TypeScript (yarn)", markers: []string{"yarn.lock"}, tool: "yarn",
		install: "yarn install --frozen-lockfile", nodeLock: true},
	{language: "JavaScript/TypeScript (pnpm)", markers: []string{"pnpm-lock.yaml"}, tool: "pnpm",
		install: "pnpm i --frozen-lockfile", nodeLock: true},
	{language: "Python (poetry)", markers: []string{"poetry.lock"}, tool: "poetry",
		install: "poetry install --no-root --no-interaction"},
	{language: "Python (pipenv)", markers: []string{"Pipfile.lock"}, tool: "pipenv", install: "pipenv sync"},
	{language: "Python (pip)", markers: []string{"requirements.txt"}, tool: "python3",
		install: "python3 -m venv .venv && " +
			".venv/bin/python -m pip install --disable-pip-version-check --quiet -r requirements.txt", venv: true},
	{language: "Java (Maven)", markers: []string{"pom.xml"}, tool: "mvn"},
	{language: "Go", markers: []string{"go.mod"}, tool: "go"},
	{language: "C#/F# (.NET)",
		markers: []string{"*.sln", "*.csproj", "*.fsproj", "src/*.sln", "src/*/*.csproj", "src/*/*.fsproj"}, tool: "dotnet"},
}

// shellBuiltin are commands an app's command may start with that are not programs on PATH.
var shellBuiltin = map[string]bool{
	"cd": true, "export": true, "set": true, "exec": true, ".": true, "source": true, "exit": true,
}

// WorkspaceFiles are the files a synthesis may read in the directories above the app's, in a
// monorepo: the toolchains' lock and project files, and the workspace settings beside them.
func WorkspaceFiles() []string {
	out := []string{
		"package.json", "pnpm-workspace.yaml", ".npmrc", ".yarnrc", ".yarnrc.yml", "tsconfig.json", "tsconfig.base.json",
	}
	for _, tc := range toolchains {
		for _, m := range tc.markers {
			if !strings.ContainsAny(m, "*/") {
				out = append(out, m)
			}
		}
	}
	return out
}

// detect names the app's toolchain from the files in dir, and the marker that told; nil when
// none matches (a plain node app without a lock file).
func detect(dir string) (*toolchain, string) {
	for i := range toolchains {
		for _, m := range toolchains[i].markers {
			if found, _ := filepath.Glob(filepath.Join(dir, m)); len(found) > 0 {
				rel, _ := filepath.Rel(dir, found[0])
				return &toolchains[i], filepath.ToSlash(rel)
			}
		}
	}
	return nil, ""
}

// missingTool says, in words a user can act on, that the environment lacks what the app needs.
func missingTool(language, marker, tool, command string) error {
	return &Error{Stage: "install", Command: command, Err: fmt.Errorf(
		"this is a %s app (%s) and %s is not on PATH here. "+
			"The cdkbot image synthesizes JavaScript/TypeScript and Python (pip) apps; "+
			"for other languages run cdkbot from the setup action in a job that installs the toolchain first "+
			"(actions/setup-java, actions/setup-go, actions/setup-dotnet; see \"Apps in any language\" in the README), "+
			"or synthesize in an earlier step and pass base-assembly and head-assembly", language, marker, tool)}
}

// lookPath finds program on the PATH of env (the app's environment, not cdkbot's); a path
// (./gradlew) is looked up from dir.
func lookPath(env []string, dir, program string) bool {
	if strings.ContainsAny(program, `/\`) {
		if !filepath.IsAbs(program) {
			program = filepath.Join(dir, program)
		}
		_, err := os.Stat(program)
		return err == nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			continue
		}
		for _, ext := range executableSuffixes {
			fi, err := os.Stat(filepath.Join(d, program+ext))
			if err == nil && !fi.IsDir() && (ext != "" || fi.Mode()&0o111 != 0) {
				return true
			}
		}
	}
	return false
}

// firstProgram is the program a shell command starts with, after any VAR=value assignments;
// "" when the command starts with shell syntax cdkbot does not read (a subshell, a quote).
func firstProgram(command string) string {
	for _, f := range strings.Fields(command) {
		if strings.Contains(f, "=") && !strings.HasPrefix(f, "=") {
			continue
		}
		if !plainProgram().MatchString(f) {
			return ""
		}
		return f
	}
	return ""
}

var plainProgram = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._/+-]+$`) })

// venvEnv runs the app with the virtual environment its install made, as an activated shell would.
func venvEnv(env []string, dir string) []string {
	venv := filepath.Join(dir, ".venv")
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + filepath.Join(venv, "bin") + string(os.PathListSeparator) + v
		}
		out = append(out, kv)
	}
	return append(out, "VIRTUAL_ENV="+venv)
}
