package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/review"
)

// `cdkbot --version` prints what `cdkbot version` prints.
func TestVersionFlag(t *testing.T) {
	code, out, errOut := run(t, "--version")
	_, want, _ := run(t, "version")
	if code != ExitOK || out != want {
		t.Fatalf("--version: exit %d\n%s%s\nwant:\n%s", code, out, errOut, want)
	}
}

// helpLine is the line of a command's --help that describes flag.
func helpLine(t *testing.T, flag string, args ...string) string {
	t.Helper()
	code, out, _ := run(t, append(args, "--help")...)
	if code != ExitOK {
		t.Fatalf("%v --help: exit %d", args, code)
	}
	m := regexp.MustCompile(`(?m)^\s+--` + flag + ` .*$`).FindString(out)
	if m == "" {
		t.Fatalf("%v --help has no --%s:\n%s", args, flag, out)
	}
	return m
}

// The --fail-on help of review and of the hook lists every gate the review evaluates (from the
// review's own list), and review's default is the review's default list.
func TestHelpListsEveryGate(t *testing.T) {
	for _, args := range [][]string{{"review"}, {"hook", "run"}} {
		line := helpLine(t, "fail-on", args...)
		for _, g := range review.AllGates {
			if !regexp.MustCompile(`[ :,]` + g + `[,( ]`).MatchString(line) {
				t.Errorf("%v --help: --fail-on does not name the gate %s:\n%s", args, g, line)
			}
		}
		if !strings.Contains(line, "(default ["+strings.Join(review.DefaultFailOn, ",")+"])") {
			t.Errorf("%v --help: --fail-on does not show the default gates:\n%s", args, line)
		}
	}
	if line := helpLine(t, "head-assembly", "review"); strings.Contains(line, "required") {
		t.Errorf("review --help calls --head-assembly required; --repo is the other way:\n%s", line)
	}
	if line := helpLine(t, "require-approval", "deploy"); !strings.Contains(line, "--require-approval string ") {
		t.Errorf("deploy --help: --require-approval's value is a string:\n%s", line)
	}
}

// `cdkbot action` outside a GitHub Actions job is a usage error, not a quiet success.
func TestActionOutsideActionsIsAUsageError(t *testing.T) {
	t.Setenv("GITHUB_EVENT_NAME", "")
	code, out, errOut := run(t, "action")
	if code != ExitUsage || !strings.Contains(errOut, "GITHUB_EVENT_NAME is not set") || strings.Contains(out, "::notice") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

// --verbose and RUNNER_DEBUG=1 turn debug lines on; nothing else does.
func TestDebugLogs(t *testing.T) {
	t.Setenv("RUNNER_DEBUG", "")
	if _, _, errOut := run(t, "version"); strings.Contains(errOut, "debug:") {
		t.Fatalf("debug lines without --verbose:\n%s", errOut)
	}
	want := []string{`cdkbot: debug: command "cdkbot version"`, "cdkbot: debug: exit 0 after"}
	check := func(name, errOut string) {
		for _, w := range want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: no %q in:\n%s", name, w, errOut)
			}
		}
	}
	_, _, errOut := run(t, "--verbose", "version")
	check("--verbose", errOut)
	t.Setenv("RUNNER_DEBUG", "1")
	_, _, errOut = run(t, "version")
	check("RUNNER_DEBUG=1", errOut)
	// A failure says its exit code and error.
	_, _, errOut = run(t, "inspect", t.TempDir()+"/missing")
	if !regexp.MustCompile(`cdkbot: debug: exit 2 after \S+: `).MatchString(errOut) {
		t.Errorf("failure: %s", errOut)
	}
}

// The GitHub client's requests are logged with their method, path and status, never a query
// or a header (where the token is).
func TestDebugTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	defer srv.Close()
	var buf bytes.Buffer
	d := &debugLog{w: &buf, on: true}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/repos/acme/shop/issues?per_page=100", nil)
	req.Header.Set("Authorization", "Bearer ghs_secret")
	resp, err := d.httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	line := buf.String()
	if !strings.Contains(line, "GET "+srv.URL+"/repos/acme/shop/issues → 418") || strings.Contains(line, "per_page") ||
		strings.Contains(line, "ghs_secret") {
		t.Errorf("logged: %q", line)
	}
	if (&debugLog{w: &buf}).httpClient() != nil || (*debugLog)(nil).enabled() {
		t.Error("a switched-off log changes the client")
	}
}

// A usage error points at the help of the command that was run, not the top-level one.
func TestUsageErrorsPointAtTheirCommandsHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		help string
	}{
		{[]string{"diff", "one"}, "Run 'cdkbot diff --help' for usage."},
		{[]string{"review", "--format", "yaml"}, "Run 'cdkbot review --help' for usage."},
		{[]string{"nosuch"}, "Run 'cdkbot --help' for usage."},
	} {
		if code, _, stderr := run(t, c.args...); code != ExitUsage || !strings.Contains(stderr, c.help) {
			t.Errorf("%v: exit %d\n%s", c.args, code, stderr)
		}
	}
}
