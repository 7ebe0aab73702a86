package cli

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// neverAnswers is an endpoint that accepts every connection, reads what is sent and answers
// nothing, until the test ends.
func neverAnswers(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() { _, _ = c.Read(make([]byte, 64<<10)) }()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

// publish --timeout bounds the whole run: against an endpoint that never answers (each request
// would wait 2 minutes, 8 times), publish --dry-run --timeout 2s ends after about 2 s with exit 4,
// saying so.
func TestPublishTimeoutAgainstAnEndpointThatNeverAnswers(t *testing.T) {
	moto.Env(t, neverAnswers(t))
	dir := fixture(t, "aws-cdk-lib@2.276.0/publish")
	start := time.Now()
	code, _, stderr := run(t, "publish", dir, "--dry-run", "--timeout", "2s")
	took := time.Since(start)
	if code != ExitFailure || !strings.Contains(stderr, "publishing did not finish within 2s (--timeout)") {
		t.Errorf("exit %d after %s\n%s", code, took, stderr)
	}
	if took < 2*time.Second || took > 10*time.Second {
		t.Errorf("took %s, want about 2 s", took)
	}
	if code, _, stderr := run(t, "publish", dir, "--timeout", "0s"); code != ExitUsage || !strings.Contains(stderr, "--timeout") {
		t.Errorf("--timeout 0s: exit %d\n%s", code, stderr)
	}
}

// A fork's report file is data its author controlled: one larger than any report cdkbot writes
// (200 MB here) is refused before it is read — nothing near its size is allocated — and so is
// what is not a regular file (a named pipe would block the read forever).
func TestActionCommentRefusesAHugeReportUnread(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "cdkbot-report.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(200 << 20); err != nil { // sparse: 200 MB on paper, nothing on disk
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, _, stderr := run(t, "action", "comment", "--report", huge)
	runtime.ReadMemStats(&after)
	if code != ExitUsage || !strings.Contains(stderr, "is 200 MiB, larger than any report file cdkbot writes (at most 64 MiB)") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("refusing it allocated %d MiB: the file was read", grew>>20)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, _, stderr = run(t, "action", "comment", "--report", fifo)
	}()
	select {
	case <-done:
		if code != ExitUsage || !strings.Contains(stderr, "is not a regular file") {
			t.Errorf("named pipe: exit %d\n%s", code, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a named pipe as a report blocked")
	}
}

// The action's deploy-timeout input is the deploy's --timeout: each stack's publishing, and again
// its deployment; a value that is not a positive duration is a usage error.
func TestDeployTimeoutInput(t *testing.T) {
	for _, c := range []struct {
		value string
		want  time.Duration
		err   bool
	}{{"", 0, false}, {"20m", 20 * time.Minute, false}, {"0s", 0, true}, {"soon", 0, true}} {
		rt, err := ghaction.New(func(k string) string {
			if k == "INPUT_DEPLOY-TIMEOUT" {
				return c.value
			}
			return ""
		}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		in, err := (&actionRun{rt: rt}).deployInputs()
		if in.Timeout != c.want || (err != nil) != c.err || c.err && !strings.Contains(err.Error(), "input deploy-timeout is") {
			t.Errorf("%q: %v %v", c.value, in.Timeout, err)
		}
	}
}
