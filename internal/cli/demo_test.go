package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// The demo prints the PR comment of the embedded example, the same every time.
func TestDemo(t *testing.T) {
	code, stdout, stderr := run(t, "demo")
	if code != ExitOK || !strings.Contains(stderr, "cdkbot's check would fail") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"<!-- cdkbot:{\"tool\":\"cdkbot\",\"key\":\"demo\",\"headSha\":", "### ❌ blocked · cdkbot review\n",
		"**Blocked by `destroy-stateful`**", "#### Compatibility:", "#### Policy:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo lacks %q", want)
		}
	}
	golden.Assert(t, "testdata/review/demo.md", []byte(stdout))
	code, stdout, _ = run(t, "demo", "--format", "text")
	if code != ExitOK || !strings.HasPrefix(stdout, "cdkbot review: blocked · 3 stacks change") {
		t.Errorf("text demo: %d %s", code, stdout[:min(200, len(stdout))])
	}
}

func TestReviewFromGit(t *testing.T) {
	dir := t.TempDir()
	if err := buildDemoRepo(dir); err != nil {
		t.Fatal(err)
	}
	runCases(t, []cliCase{
		{"two revisions", []string{"review", "--repo", dir, "--base", "HEAD~1", "--head", "HEAD", "--label", "cdkbot/approve-destructive", "--fail-on", "destroy-stateful"}, ExitOK,
			[]string{"cdkbot review: approved · 3 stacks change", "approved by label cdkbot/approve-destructive"}, nil},
		{"same revision", []string{"review", "--repo", dir, "--base", "HEAD", "--head", "HEAD"}, ExitOK, []string{"no changes"}, nil},
		{"unknown revision", []string{"review", "--repo", dir, "--base", "nope", "--head", "HEAD"}, ExitUsage, nil, []string{`resolve "nope"`}},
		{"both kinds of input", []string{"review", "--repo", dir, "--head", "HEAD", "--head-assembly", dir}, ExitUsage, nil, []string{"not both"}},
		{"no assembly in the revision", []string{"review", "--repo", dir, "--base", "HEAD~1", "--head", "HEAD", "--assembly-dir", "out"}, ExitUsage, nil,
			[]string{"has no out and cannot be synthesized", `no cdk.json with an "app" command`, "Commit the assembly"}},
	})
	// Without --base, the merge base with the default branch is the base.
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CommitAll("notes", object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "review", "--repo", dir, "--head", "HEAD")
	if code != ExitOK || !strings.Contains(stdout, "no changes") {
		t.Errorf("default base: %d %s %s", code, stdout[:min(300, len(stdout))], stderr)
	}
}

// The demo's repository is on main, as the README's examples say, and reviewing it from its
// default branch without --base says why there is nothing to compare and what to give instead;
// a --base that is no branch names the branches there are.
func TestReviewOnTheDefaultBranchSaysWhy(t *testing.T) {
	dir := t.TempDir()
	if err := buildDemoRepo(dir); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "review", "--repo", dir, "--no-color")
	if code != ExitOK || !strings.HasPrefix(stdout, "cdkbot review: no changes") ||
		!strings.Contains(stderr, "its own merge base: nothing to compare; give --base (e.g. --base HEAD~1)") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, _ := run(t, "review", "--repo", dir, "--base", "main~1", "--head", "main"); code != ExitVerdict ||
		!strings.Contains(stdout, "3 stacks change") {
		t.Errorf("--base main~1: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run(t, "review", "--repo", dir, "--base", "master"); code != ExitUsage ||
		!strings.Contains(stderr, "(branches here: main)") {
		t.Errorf("--base master: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := run(t, "review", "--repo", t.TempDir()); code != ExitUsage ||
		!strings.Contains(stderr, "is not in a git repository: run inside one, or name it with --repo DIR") {
		t.Errorf("not a repository: exit %d\n%s", code, stderr)
	}
}

// review --repo applies the head revision's .cdkbot.yml wherever cdkbot runs from (it used to
// read ./.cdkbot.yml of the current directory, so reviewing another repository had no policy).
func TestReviewFromGitReadsTheHeadsPolicy(t *testing.T) {
	dir := t.TempDir()
	if err := buildDemoRepo(dir); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // no .cdkbot.yml here
	code, stdout, stderr := run(t, "review", "--repo", dir, "--base", "HEAD~1", "--format", "json")
	if code != ExitVerdict || !strings.Contains(stdout, `"policy":{`) {
		t.Errorf("exit %d, no policy in the review:\n%.400s\n%s", code, stdout, stderr)
	}
}

// A bad setting is refused before any revision is read: nothing about the head is logged first.
func TestReviewRefusesBadSettingsBeforeReadingGit(t *testing.T) {
	dir := t.TempDir()
	if err := buildDemoRepo(dir); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "review", "--repo", dir, "--base", "HEAD~1", "--fail-on", "bogus")
	if code != ExitUsage || !strings.Contains(stderr, `unknown gate "bogus"`) || strings.Contains(stderr, "head (") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}
