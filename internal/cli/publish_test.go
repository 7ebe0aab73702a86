package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/testutil/golden"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// The file assets of the publish fixture (synthesized by aws-cdk-lib 2.276.0 for moto's account).
const publishFileIDs = "5ddc8cfa4436,b7e4bef83e44,ca0fe5e6ea5d,e3f3539db76d"

func TestPublishCommandAgainstMoto(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	dir := fixture(t, "aws-cdk-lib@2.276.0/publish")

	// The image asset cannot be published yet: refused before anything is uploaded.
	code, _, stderr := run(t, "publish", dir)
	if code != ExitUsage || !strings.Contains(stderr, "73b0e49e8cb9") || !strings.Contains(stderr, "select the other assets by id") {
		t.Fatalf("publish with an image asset: exit %d\n%s", code, stderr)
	}

	code, stdout, stderr := run(t, "publish", dir, publishFileIDs, "--dry-run")
	if code != ExitOK {
		t.Fatalf("dry run: exit %d\n%s", code, stderr)
	}
	golden.Assert(t, "testdata/publish/dry-run.txt", []byte(stdout))

	code, stdout, stderr = run(t, "publish", dir, publishFileIDs, "--concurrency", "2")
	if code != ExitOK {
		t.Fatalf("publish: exit %d\n%s", code, stderr)
	}
	golden.Assert(t, "testdata/publish/published.txt", []byte(stdout))
	if !strings.Contains(stderr, "cdkbot: zipping ca0fe5e6ea5d") || !strings.Contains(stderr, "[4/4]") {
		t.Errorf("progress on stderr:\n%s", stderr)
	}

	code, stdout, _ = run(t, "publish", dir, publishFileIDs, "--format", "json")
	var out struct {
		DryRun bool           `json:"dryRun"`
		Totals map[string]int `json:"totals"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != ExitOK {
		t.Fatalf("json: exit %d, %v\n%s", code, err, stdout)
	}
	if out.Totals["present"] != 4 || len(out.Totals) != 1 {
		t.Errorf("second run totals %v, want 4 present", out.Totals)
	}
}

func TestPublishCommandUsage(t *testing.T) {
	moto.Env(t, "http://127.0.0.1:9") // nothing listens: no request may be needed to fail these
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"publish"}, "takes the assembly directory"},
		{[]string{"publish", fixture(t, "aws-cdk-lib@2.276.0/publish"), "deadbeef00"}, `no asset "deadbeef00"`},
		{[]string{"publish", fixture(t, "aws-cdk-lib@2.276.0/publish"), "--concurrency", "0"}, "--concurrency must be at least 1"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s", tc.args, code, stderr)
		}
	}
}
