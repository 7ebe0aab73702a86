package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ecr"

	"github.com/cdkbot/cdkbot/internal/testutil/fakedocker"
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

	calls := fakedocker.Install(t)

	code, stdout, stderr := run(t, "publish", dir, "--dry-run")
	if code != ExitOK {
		t.Fatalf("dry run: exit %d\n%s", code, stderr)
	}
	golden.Assert(t, "testdata/publish/dry-run.txt", []byte(stdout))

	code, stdout, stderr = run(t, "publish", dir, "--concurrency", "2")
	if code != ExitOK {
		t.Fatalf("publish: exit %d\n%s", code, stderr)
	}
	golden.Assert(t, "testdata/publish/published.txt", []byte(stdout))
	if !strings.Contains(stderr, "cdkbot: zipping ca0fe5e6ea5d") || !strings.Contains(stderr, "[5/5]") {
		t.Errorf("progress on stderr:\n%s", stderr)
	}
	if got := fakedocker.Calls(t, calls); len(got) != 4 || !strings.HasPrefix(got[0], "build ") || !strings.HasPrefix(got[3], "push ") {
		t.Errorf("docker calls: %q", got)
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
		{[]string{"publish", fixture(t, "aws-cdk-lib@2.276.0/publish"), "--concurrency", "0"}, "--concurrency and --build-concurrency must be at least 1"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s", tc.args, code, stderr)
		}
	}
}

// A CDK v1 assembly (legacy synthesis: asset parameters, no asset manifest) publishes its file
// assets to the toolkit staging bucket under assets/<id>/<hash><ext>.
func TestPublishCommandLegacyAssembly(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	calls := fakedocker.Install(t)
	dir := fixture(t, "aws-cdk-core@1.204.0/publish")
	bucket := "cdk-hnb659fds-assets-123456789012-us-east-1" // the modern bootstrap's bucket stands in for v1's staging bucket

	// Without the bootstrap stack the bucket cannot be found: the error says what to pass.
	code, _, stderr := run(t, "publish", dir, "--dry-run", "--toolkit-stack-name", "Missing")
	if code != ExitFailure || !strings.Contains(stderr, "--toolkit-bucket") || !strings.Contains(stderr, "Missing") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	// The bucket is read from the CDKToolkit stack's BucketName output.
	code, stdout, stderr := run(t, "publish", dir, "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	var out struct {
		Outcomes []struct{ Target, State string }
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, o := range out.Outcomes {
		if strings.HasPrefix(o.Target, "s3://"+bucket+"/assets/") {
			files++
		}
		if o.State != "published" {
			t.Errorf("%s: %s", o.Target, o.State)
		}
	}
	if files != 3 || len(fakedocker.Calls(t, calls)) != 4 {
		t.Errorf("%d legacy file uploads, docker calls %q:\n%s", files, fakedocker.Calls(t, calls), stdout)
	}
	// The legacy repository was created on first use.
	if _, err := ecr.NewFromConfig(srv.Config()).DescribeRepositories(context.Background(),
		&ecr.DescribeRepositoriesInput{RepositoryNames: []string{"aws-cdk/assets"}}); err != nil {
		t.Errorf("legacy repository: %v", err)
	}
}

// In GitHub Actions the progress folds into a group and each failure is an error annotation;
// here the environments of multi-env are not bootstrapped in moto.
func TestPublishCommandInGitHubActions(t *testing.T) {
	srv := moto.Start(t)
	moto.Env(t, srv.URL)
	fakedocker.Install(t)
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_EVENT_PATH", "")
	code, stdout, stderr := run(t, "publish", fixture(t, "aws-cdk-lib@2.276.0/multi-env"), "--concurrency", "1")
	if code != ExitFailure {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	group := strings.Index(stderr, "::group::cdkbot publish: ")
	end := strings.Index(stderr, "::endgroup::")
	annotation := strings.Index(stderr, "::error::cdkbot publish: asset ")
	if group < 0 || end < group || annotation < end || !strings.Contains(stderr[annotation:], "does not exist") {
		t.Errorf("stderr:\n%s", stderr)
	}
	// One asset at a time: the first failure stops the run; the rest are skipped, not failed.
	if strings.Count(stderr, "::error::") != 1 || !strings.Contains(stdout, "1 failed, 6 skipped") {
		t.Errorf("summary:\n%s\nstderr:\n%s", stdout, stderr)
	}
}
