package cli

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cdkbot/cdkbot/internal/render"
)

// debugLog writes debug lines to stderr when --verbose is given or RUNNER_DEBUG is 1 (GitHub sets
// it when a run is re-run with debug logging). A nil or switched-off log writes nothing. Lines
// are cleaned like every other log line, so nothing they quote can run a workflow command.
type debugLog struct {
	w  io.Writer
	on bool
}

func (d *debugLog) enabled() bool { return d != nil && d.on }

// Printf writes one debug line.
func (d *debugLog) Printf(format string, args ...any) {
	if !d.enabled() {
		return
	}
	fmt.Fprintf(d.w, "cdkbot: debug: %s\n", render.Clean(fmt.Sprintf(format, args...)))
}

// command logs what runs: cdkbot's build, the command and the flags given on its command line.
func (d *debugLog) command(cmd *cobra.Command) {
	if !d.enabled() {
		return
	}
	rev, when := Build()
	if rev == "" {
		rev = "unknown"
	}
	if when == "" {
		when = "unknown"
	}
	d.Printf("cdkbot %s (commit %s, built %s) %s/%s", Version(), rev, when, runtime.GOOS, runtime.GOARCH)
	var flags []string
	cmd.Flags().Visit(func(f *pflag.Flag) { flags = append(flags, "--"+f.Name+"="+f.Value.String()) })
	d.Printf("command %q, flags given: %s", cmd.CommandPath(), strings.Join(flags, " "))
}

// transport logs each HTTP request an adapter sends (method, URL without its query, status,
// time); never headers, where tokens are.
func (d *debugLog) transport(next http.RoundTripper) http.RoundTripper {
	if !d.enabled() {
		return next
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := next.RoundTrip(req)
		u := *req.URL
		u.RawQuery, u.User = "", nil
		if err != nil {
			d.Printf("%s %s: %v (%s)", req.Method, u.String(), err, time.Since(start).Round(time.Millisecond))
		} else {
			d.Printf("%s %s → %d (%s)", req.Method, u.String(), resp.StatusCode, time.Since(start).Round(time.Millisecond))
		}
		return resp, err
	})
}

// httpClient is the client an adapter's requests go through: nil (the adapter's default) unless
// debug logs are on, then one that logs each request.
func (d *debugLog) httpClient() *http.Client {
	if !d.enabled() {
		return nil
	}
	return &http.Client{Transport: d.transport(nil)}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
