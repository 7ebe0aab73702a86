package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/failure"
)

// repoWithSecret makes a repository (a .git directory is enough to mark its top) with the app
// in infra/, and beside it a file of cdkbot's user whose keys and values are secrets.
func repoWithSecret(t *testing.T) (repo, secretFile string) {
	t.Helper()
	base := t.TempDir()
	repo, secretFile = filepath.Join(base, "repo"), filepath.Join(base, "secret.yml")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "infra")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secretFile, []byte("github_token: ghp_topsecret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return repo, secretFile
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// The checkout's configuration file (the action's, the default one) is read inside the
// checkout: a link out of it is refused by name, and nothing of the file it names is shown. A
// link inside the repository is followed; a file the user named on the command line is read
// wherever it leads.
func TestLoadConfigStaysInsideTheCheckout(t *testing.T) {
	repo, secretFile := repoWithSecret(t)
	config := filepath.Join(repo, "infra", ".cdkbot.yml")
	symlink(t, secretFile, config)
	_, _, found, err := LoadConfig(config, filepath.Join(repo, "infra"), false)
	if !isInput(err) || found ||
		!strings.HasPrefix(err.Error(), "infra/.cdkbot.yml is, or goes through, a symbolic link that leads out of the checkout") ||
		strings.Contains(err.Error(), "github_token") || strings.Contains(err.Error(), "ghp_") {
		t.Errorf("link out: found %v, %v", found, err)
	}

	// Named on the command line: the user's choice, read wherever it is (here: not a policy).
	if _, _, _, err := LoadConfig(config, "", true); err == nil || !strings.Contains(err.Error(), `unknown key "github_token"`) {
		t.Errorf("named: %v", err)
	}

	// A file the workflow names outside the checkout (the action's config input): its choice.
	named := filepath.Join(filepath.Dir(repo), "named.yml")
	if err := os.WriteFile(named, []byte("deploy:\n  concurrency: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, deploy, found, err := LoadConfig(named, filepath.Join(repo, "infra"), true); err != nil || !found || deploy.Concurrency != 2 {
		t.Errorf("named outside the checkout: found %v, %+v, %v", found, deploy, err)
	}

	// A link inside the repository: the apps of a monorepo share one configuration.
	os.Remove(config)
	if err := os.WriteFile(filepath.Join(repo, ".cdkbot.yml"), []byte("deploy:\n  concurrency: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, "../.cdkbot.yml", config)
	_, deploy, found, err := LoadConfig(config, filepath.Join(repo, "infra"), true)
	if err != nil || !found || deploy.Concurrency != 3 {
		t.Errorf("link inside: found %v, %+v, %v", found, deploy, err)
	}
}

func isInput(err error) bool {
	var fe *failure.Error
	return errors.As(err, &fe) && fe.Kind == failure.Input
}

// What a repository pins is read inside it, regular files only, bounded: a lock file linked to
// /dev/zero (which once ran cdkbot out of memory) or a package.json linked out is refused by
// name, at once.
func TestReadRepoFactsStaysInsideTheCheckout(t *testing.T) {
	for name, target := range map[string]string{"package-lock.json": "/dev/zero", "package.json": "secret", "cdk.json": "secret"} {
		t.Run(name, func(t *testing.T) {
			repo, secretFile := repoWithSecret(t)
			if target == "secret" {
				target = secretFile
			}
			symlink(t, target, filepath.Join(repo, "infra", name))
			start := time.Now()
			_, err := ReadRepoFacts(filepath.Join(repo, "infra"))
			if !isInput(err) || !strings.HasPrefix(err.Error(), "infra/"+name+" is, or goes through, a symbolic link") ||
				strings.Contains(err.Error(), "ghp_") || time.Since(start) > 5*time.Second {
				t.Errorf("got %v after %v", err, time.Since(start))
			}
		})
	}
	// Inside the repository, a lock file shared by a link is read.
	repo, _ := repoWithSecret(t)
	lock := `{"packages": {"node_modules/aws-cdk": {"version": "2.1020.0"}}}`
	if err := os.WriteFile(filepath.Join(repo, "package-lock.json"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, "../package-lock.json", filepath.Join(repo, "infra", "package-lock.json"))
	if facts, err := ReadRepoFacts(filepath.Join(repo, "infra")); err != nil || facts.CLIVersion != "2.1020.0" {
		t.Errorf("shared lock file: %+v, %v", facts, err)
	}
}

// The assembly a pull request's app wrote is read inside its directory: a manifest.json linked
// to a root-only file (here one whose artifact id is a secret, which the review would show) is
// refused by name; a link inside the directory is followed.
func TestLoadAssemblyStaysInsideItsDirectory(t *testing.T) {
	base := t.TempDir()
	dir, secretFile := filepath.Join(base, "cdk.out"), filepath.Join(base, "root-only.json")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"version": "36.0.0", "artifacts": {"s3cr3t-of-root": {"type": "cdk:tree", "properties": {"file": "tree.json"}}}}`
	if err := os.WriteFile(secretFile, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	symlink(t, secretFile, filepath.Join(dir, "manifest.json"))
	a, err := LoadAssembly(dir)
	if err == nil || strings.Contains(err.Error(), "s3cr3t") ||
		!strings.Contains(err.Error(), "manifest.json is, or goes through, a symbolic link that leads out of "+dir) {
		t.Errorf("manifest linked out: %v, %v", a, err)
	}
	os.Remove(filepath.Join(dir, "manifest.json"))
	if err := os.WriteFile(filepath.Join(dir, "real.json"), []byte(`{"version": "36.0.0", "artifacts": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, "real.json", filepath.Join(dir, "manifest.json"))
	if _, err := LoadAssembly(dir); err != nil {
		t.Errorf("manifest linked inside: %v", err)
	}
}
