// Package fakedocker puts a recording `docker` executable on PATH for tests: no docker engine
// runs on the test machines, and the code under test must run its real code path (exec of
// `docker` from PATH).
package fakedocker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Install puts the fake first on PATH for the rest of the test and returns the path of its
// call log: one line per call, "ARGS|stdin=N" with N the number of bytes read from stdin (so
// a test can check a secret arrived on stdin without the log holding it).
func Install(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	script := "#!/bin/sh\nin=$(cat | wc -c)\nprintf '%s|stdin=%s\\n' \"$*\" \"$in\" >>'" + log + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("CDK_DOCKER", "")
	return log
}

// Calls reads the log Install returned.
func Calls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
