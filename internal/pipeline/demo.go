package pipeline

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// BuildDemo writes the embedded example (files: README.md, cdkbot.yml, before/ and after/
// assemblies) into dir as a repository of two commits, the app and then the pull request, and
// returns the review of that pull request: the policy and gates the demo shows, and no AWS.
func BuildDemo(dir string, files fs.FS) (ReviewOptions, error) {
	opts := ReviewOptions{Repo: dir, Base: "HEAD~1", Head: "HEAD", AssemblyDir: "cdk.out",
		Config: filepath.Join(dir, ".cdkbot.yml"), ConfigRequired: true,
		FailOn:        append(slices.Clone(review.DefaultFailOn), review.GateSecurityBroadening),
		OverrideLabel: "cdkbot/approve-destructive", Key: "demo",
		Deployed: DeployedOff} // the embedded example is deployed nowhere: never ask AWS
	if err := buildDemoRepo(dir, files); err != nil {
		return opts, failure.OperationErr(err)
	}
	return opts, nil
}

func buildDemoRepo(dir string, files fs.FS) error {
	repo, err := gitrepo.Init(dir)
	if err != nil {
		return err
	}
	when := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	steps := []struct{ variant, message string }{
		{"before", "shop: network, data and service stacks"},
		{"after", "checkout v2: rename the orders table, public HTTPS, write access, drop the DLQ"},
	}
	for i, step := range steps {
		if i == 0 {
			for _, f := range []string{"README.md", "cdkbot.yml"} {
				b, err := fs.ReadFile(files, f)
				if err != nil {
					return err
				}
				name := f
				if f == "cdkbot.yml" {
					name = ".cdkbot.yml"
				}
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					return err
				}
			}
		}
		if err := os.RemoveAll(filepath.Join(dir, "cdk.out")); err != nil {
			return err
		}
		variant, err := fs.Sub(files, step.variant)
		if err != nil {
			return err
		}
		if err := os.CopyFS(filepath.Join(dir, "cdk.out"), variant); err != nil {
			return err
		}
		sig := object.Signature{Name: "Demo Developer", Email: "dev@example.com",
			When: when.Add(time.Duration(i) * time.Hour)}
		if _, err := repo.CommitAll(step.message, sig); err != nil {
			return err
		}
	}
	return nil
}
