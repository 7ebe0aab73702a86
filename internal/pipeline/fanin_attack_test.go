package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A leg's artifact is data where pull request code ran: a report file that is a named pipe no one
// writes to, a link to a device, a link to another directory of reports (outside, or a directory
// link inside), or a reports directory that is itself a link. None is read, none hangs the
// fan-in, and each skipped file is a note, so its leg counts as missing.
func TestReadLegReportsRefusesWhatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	writeRepoFile(t, outside, "cdkbot-report.json", `{"key":"forged"}`)
	writeRepoFile(t, dir, "good/cdkbot-report.json", `{"key":"good"}`)
	for _, d := range []string{"fifo", "dev"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := mkfifo(filepath.Join(dir, "fifo", "cdkbot-report.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "dev", "cdkbot-report.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linked-dir")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		files []LegFile
		notes []string
		err   error
	}
	done := make(chan result, 1)
	go func() { f, n, err := ReadLegReports(dir); done <- result{f, n, err} }()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("reading the legs' reports hangs")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	var got []string
	for _, f := range r.files {
		got = append(got, f.Path+"="+string(f.Raw))
	}
	if strings.Join(got, " ") != `good/cdkbot-report.json={"key":"good"}` {
		t.Errorf("read %q", got)
	}
	notes := strings.Join(r.notes, "\n")
	if !strings.Contains(notes, "fifo/") || !strings.Contains(notes, "dev/") {
		t.Errorf("notes %q", r.notes)
	}
	link := filepath.Join(t.TempDir(), "reports")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadLegReports(link); err == nil {
		t.Error("a reports directory that is a link is read")
	}
}
