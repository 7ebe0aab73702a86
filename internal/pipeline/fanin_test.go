package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The legs' reports are read as downloaded artifacts lie (a directory each), bounded: no link
// out of the directory, no file larger than any report cdkbot writes, no deeper than an
// artifact's own files, no more files than any matrix has legs. Each skip is a note.
func TestReadLegReports(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.json")
	writeRepoFile(t, filepath.Dir(secret), "secret.json", `{"token":"x"}`)
	writeRepoFile(t, dir, "cdkbot-report-a/cdkbot-report.json", `{"key":"a"}`)
	writeRepoFile(t, dir, "cdkbot-report-b/cdkbot-report.json", `{"key":"b"}`)
	writeRepoFile(t, dir, "cdkbot-report-b/other.json", `{"key":"c"}`)
	writeRepoFile(t, dir, "x/y/z/cdkbot-report.json", `{"key":"deep"}`)
	if err := os.MkdirAll(filepath.Join(dir, "link"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link", "cdkbot-report.json")); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge", "cdkbot-report.json")
	writeRepoFile(t, dir, "huge/cdkbot-report.json", "")
	if err := os.Truncate(huge, MaxLegReport+1); err != nil {
		t.Fatal(err)
	}
	files, notes, err := ReadLegReports(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path+"="+string(f.Raw))
	}
	if strings.Join(got, " ") != `cdkbot-report-a/cdkbot-report.json={"key":"a"} cdkbot-report-b/cdkbot-report.json={"key":"b"}` {
		t.Errorf("read %q", got)
	}
	if len(notes) != 2 || !strings.Contains(strings.Join(notes, "\n"), "huge/") || !strings.Contains(strings.Join(notes, "\n"), "link/") {
		t.Errorf("notes %q", notes)
	}
	if files, notes, err := ReadLegReports(filepath.Join(dir, "none")); err != nil || len(files) != 0 || len(notes) != 1 {
		t.Errorf("a missing directory is no report: %v %q %v", files, notes, err)
	}
	if _, _, err := ReadLegReports(huge); err == nil {
		t.Error("a file is not a directory of reports")
	}
}

func TestReadLegReportsBoundsTheCount(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i <= MaxLegReports; i++ {
		writeRepoFile(t, dir, fmt.Sprintf("a%d/cdkbot-report.json", i), "{}")
	}
	if _, _, err := ReadLegReports(dir); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("got %v", err)
	}
}
