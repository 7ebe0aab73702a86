// Package golden compares rendered output with files under testdata, and rewrites them when
// tests run with -update. It exists so every view's exact output is reviewed in diffs.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Assert compares got with the golden file at path (relative to the test's package), or
// writes it when -update is set.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run the test with -update to create it): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from %s (run with -update to accept):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the first differing lines, enough to see what changed without a diff library.
func lineDiff(want, got string) string {
	w, g := bytes.Split([]byte(want), []byte("\n")), bytes.Split([]byte(got), []byte("\n"))
	var out bytes.Buffer
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl []byte
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if bytes.Equal(wl, gl) {
			continue
		}
		out.WriteString("line ")
		out.WriteString(strconv.Itoa(i + 1))
		out.WriteString(":\n  want: ")
		out.Write(wl)
		out.WriteString("\n  got:  ")
		out.Write(gl)
		out.WriteString("\n")
		if shown++; shown == 10 {
			out.WriteString("…\n")
			break
		}
	}
	return out.String()
}
