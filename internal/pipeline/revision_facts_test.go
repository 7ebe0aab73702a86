package pipeline

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
)

// gitRun runs the real git in dir (gitcli.Run).
func gitRun(t *testing.T, dir string, args ...string) string { return gitcli.Run(t, dir, args...) }

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func lockPinning(v string) string {
	return `{"lockfileVersion": 3, "packages": {"node_modules/aws-cdk": {"version": "` + v + `"}}}`
}

// pinRepo is a repository whose app (in infra/, with its committed cdk.out needing aws-cdk
// 2.1148.2) pins aws-cdk 2.1000.0 on main and 2.1148.2 on the branch "bump"; main is checked
// out.
func pinRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	gitRun(t, root, "init", "-q")
	app := filepath.Join(root, "infra")
	copyTree(t, filepath.Join("..", "..", "compat-fixtures", "aws-cdk-lib@2.276.0", "deploy-graph"),
		filepath.Join(app, "cdk.out"))
	writeFile(t, filepath.Join(app, "package-lock.json"), lockPinning("2.1000.0"))
	writeFile(t, filepath.Join(app, "cdk.json"), `{"app": "node app.js", "context": {"side": "main"}}`)
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "main")
	gitRun(t, root, "checkout", "-q", "-b", "bump")
	writeFile(t, filepath.Join(app, "package-lock.json"), lockPinning("2.1148.2"))
	writeFile(t, filepath.Join(app, "cdk.json"), `{"app": "node app.js", "context": {"side": "bump"}}`)
	gitRun(t, root, "commit", "-q", "-am", "bump aws-cdk")
	gitRun(t, root, "checkout", "-q", "main")
	return root
}

func cliCheckOf(t *testing.T, checks []compat.Check) compat.Check {
	t.Helper()
	for _, c := range checks {
		if c.Name == "cli" {
			return c
		}
	}
	t.Fatalf("no cli check in %+v", checks)
	return compat.Check{}
}

// Reviewed from a checkout of main, a branch that bumps aws-cdk is checked against the
// branch's pin: every fact a review reads of the repository comes from the head revision, not
// the working tree (which once said "upgrade to ≥ 2.1148.2" of a branch that had).
func TestReviewReadsRepoFactsFromTheHeadRevision(t *testing.T) {
	root := pinRepo(t)
	app := filepath.Join(root, "infra")
	// Uncommitted edits of the working tree are not the revision either.
	writeFile(t, filepath.Join(app, "package.json"), `{"devDependencies": {"aws-cdk": "^2.1.0"}}`)
	rep, cleanup, err := Review(context.Background(), ReviewOptions{Repo: app, Base: "main", Head: "bump",
		AssemblyDir: "infra/cdk.out", CommittedHead: true, NoSynth: true, Deployed: "off"})
	defer cleanup()
	if err != nil {
		t.Fatal(err)
	}
	if c := cliCheckOf(t, rep.Compatibility); c.Status != compat.Pass || !strings.Contains(c.Finding, "2.1148.2") {
		t.Errorf("cli check of the branch reviewed from main: %+v", c)
	}

	// The other way round: main's pin, reviewed with the branch checked out, fails.
	gitRun(t, root, "checkout", "-q", "bump")
	rep, cleanup2, err := Review(context.Background(), ReviewOptions{Repo: app, Base: "bump", Head: "main",
		AssemblyDir: "infra/cdk.out", CommittedHead: true, NoSynth: true, Deployed: "off"})
	defer cleanup2()
	if err != nil {
		t.Fatal(err)
	}
	if c := cliCheckOf(t, rep.Compatibility); c.Status != compat.Fail || !strings.Contains(c.Finding, "2.1000.0") {
		t.Errorf("cli check of main reviewed from the branch: %+v", c)
	}
}

// ReadRevisionFacts reads the lock file, package.json and cdk.json's context of a revision,
// with the safety rules of a checkout's files: a committed symbolic link is refused (it would
// lead wherever its author chose), as is a file over its limit, before it is read.
func TestReadRevisionFacts(t *testing.T) {
	root := pinRepo(t)
	app := filepath.Join(root, "infra")
	facts, err := ReadRevisionFacts(app, "bump")
	if err != nil || facts.CLIVersion != "2.1148.2" || facts.CLISource != "package-lock.json" ||
		facts.Context["side"] != "bump" {
		t.Fatalf("bump: %+v %v", facts, err)
	}
	if facts, err := ReadRevisionFacts(app, "main"); err != nil || facts.CLIVersion != "2.1000.0" {
		t.Fatalf("main: %+v %v", facts, err)
	}

	secret := filepath.Join(t.TempDir(), "secret.json")
	writeFile(t, secret, `{"context": {"github_token": "ghp_topsecret"}}`)
	if err := os.Remove(filepath.Join(app, "cdk.json")); err != nil {
		t.Fatal(err)
	}
	symlink(t, secret, filepath.Join(app, "cdk.json"))
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "link out")
	_, err = ReadRevisionFacts(app, "HEAD")
	var refused *gitrepo.RefusedError
	if !isInput(err) || !errors.As(err, &refused) || !strings.Contains(err.Error(), "infra/cdk.json") ||
		strings.Contains(err.Error(), "ghp_") {
		t.Errorf("committed link: %v", err)
	}

	gitRun(t, root, "checkout", "-q", "bump")
	writeFile(t, filepath.Join(app, "package.json"), `{"name": "`+strings.Repeat("x", 2<<20)+`"}`)
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "huge package.json")
	if _, err := ReadRevisionFacts(app, "HEAD"); !isInput(err) || !strings.Contains(err.Error(), "over cdkbot's limit") {
		t.Errorf("huge package.json: %v", err)
	}
}
