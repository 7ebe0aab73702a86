package findings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/checkout"
)

// headCopy is the real head assembly (testdata/head) in a directory of its own, its validation
// report replaced by what plant puts there; read the way the pipelines read an assembly the
// pull request's app wrote (checkout.FS).
func headCopy(t *testing.T, plant func(dir, report string)) *assembly.Assembly {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir("testdata/head")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == ReportFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata/head", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plant(dir, filepath.Join(dir, ReportFile))
	a, err := assembly.Load(checkout.FS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The app writes validation-report.json: a link out of the assembly (to a report of another
// app's, to the runner's files), a link to a device, a named pipe no one writes to, a report
// nested a million levels deep, and one with a million violating constructs. Each is refused by
// name or bounded, in well under a second, never hangs, and never reads what the link names.
func TestHostileReportFiles(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "elsewhere.json")
	leak := `{"pluginReports":[{"pluginName":"LEAKED","conclusion":"success","violations":[{"ruleName":"R","description":"secret"}]}]}`
	if err := os.WriteFile(outside, []byte(leak), 0o644); err != nil {
		t.Fatal(err)
	}
	var many strings.Builder
	many.WriteString(`{"pluginReports":[{"pluginName":"p","conclusion":"success","violations":[{"ruleName":"R","description":"d","violatingConstructs":[`)
	for i := range 1_000_000 {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString(`{}`)
	}
	many.WriteString(`]}]}]}`)
	for _, tc := range []struct {
		name    string
		plant   func(dir, report string) error
		problem string // "" when the report reads, bounded
	}{
		{"a link out of the assembly", func(_, r string) error { return os.Symlink(outside, r) }, "link"},
		{"a relative link out of the assembly", func(dir, r string) error {
			rel, _ := filepath.Rel(dir, outside)
			return os.Symlink(rel, r)
		}, "link"},
		{"a link to a device", func(_, r string) error { return os.Symlink("/dev/zero", r) }, "link"},
		{"a named pipe", func(_, r string) error { return mkfifo(r) }, "not a regular file"},
		{"a directory", func(_, r string) error { return os.Mkdir(r, 0o755) }, "not a regular file"},
		{"nested a million levels deep", func(_, r string) error {
			return os.WriteFile(r, []byte(strings.Repeat("[", 1_000_000)+strings.Repeat("]", 1_000_000)), 0o644)
		}, "not valid JSON"},
		{"a million constructs", func(_, r string) error { return os.WriteFile(r, []byte(many.String()), 0o644) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := headCopy(t, func(dir, r string) {
				if err := tc.plant(dir, r); err != nil {
					t.Fatal(err)
				}
			})
			done := make(chan *Report, 1)
			start := time.Now()
			go func() { done <- Review(nil, a, nil) }()
			var r *Report
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("reading the report hangs")
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
			if r == nil {
				t.Fatal("no findings")
			}
			for _, f := range r.Findings {
				if f.Plugin == "LEAKED" || f.Message == "secret" {
					t.Fatalf("read through the link: %+v", f)
				}
			}
			if len(r.Findings) > MaxFindings {
				t.Errorf("%d findings kept", len(r.Findings))
			}
			switch {
			case tc.problem == "" && r.Problem != "":
				t.Errorf("problem %q", r.Problem)
			case tc.problem == "" && r.Omitted == 0:
				t.Errorf("a million constructs, none omitted: %d kept", len(r.Findings))
			case tc.problem != "" && (!strings.Contains(r.Problem, ReportFile) || !strings.Contains(r.Problem, tc.problem)):
				t.Errorf("problem %q, want one naming %s and %q", r.Problem, ReportFile, tc.problem)
			}
			if tc.problem != "" {
				if items := GateItems(r); len(items) == 0 {
					t.Error("an unreadable report does not reach the validation-error gate")
				}
			}
		})
	}
}
