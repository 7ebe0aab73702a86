//go:build unix

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cdkbot/cdkbot/internal/synth"
	"github.com/cdkbot/cdkbot/internal/testutil/fakesudo"
	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
)

// plainRunner is a runner where cdkbot can have no synthesis users: it is not root and has no
// passwordless sudo (a self-hosted runner, a container run as a user).
type plainRunner struct{}

func (plainRunner) UID() int                                   { return 1001 }
func (plainRunner) Sudo(context.Context) bool                  { return false }
func (plainRunner) LookupUser(string) (*synth.Identity, error) { return nil, synth.ErrNoUser }
func (plainRunner) CreateUser(context.Context, string, bool) error {
	panic("a plain runner creates no user")
}

// onPlainRunner makes the action's reviews see a plain runner until the test ends.
func onPlainRunner(t *testing.T) {
	synthHost = plainRunner{}
	t.Cleanup(func() { synthHost = nil })
}

// ranApp is a synth command that leaves a mark ($CDK_TEST_RAN, set to marker) when it runs.
func ranApp(t *testing.T) (marker, command string) {
	marker = filepath.Join(t.TempDir(), "ran")
	t.Setenv("CDK_TEST_RAN", marker)
	return marker, `touch "$CDK_TEST_RAN"; ` + copyApp
}

// pullRequestOf sets up the action for pull request 42 from head onto base, synthesized from dir.
func pullRequestOf(t *testing.T, srv *ghserver.Server, dir, head, base string) {
	t.Helper()
	actionEnv(t, srv, actionToken, "pull_request", prEvent(t, "synchronize", head, base))
	t.Setenv("INPUT_WORKING-DIRECTORY", dir)
	t.Setenv("INPUT_BASE-ASSEMBLY", "")
	t.Setenv("INPUT_HEAD-ASSEMBLY", "")
	t.Setenv("GITHUB_SHA", head)
}

// Where cdkbot can have no synthesis users (the setup action on a runner without root or
// passwordless sudo), the action does not run the pull request's app as its own user, where it
// could read the token from /proc/<cdkbot>/environ: it refuses and says what to do.
func TestActionRefusesPullRequestCodeWithoutASandbox(t *testing.T) {
	onPlainRunner(t)
	dir, base, head := tableDropped(t, false)
	srv := ghserver.New(t, actionToken)
	pullRequestOf(t, srv, dir, head, base)
	marker, command := ranApp(t)
	t.Setenv("INPUT_SYNTH-COMMAND", command)
	for _, synthUser := range []string{"", "cdkbot-base,cdkbot-head"} {
		t.Setenv("INPUT_SYNTH-USER", synthUser)
		code, stdout, stderr := run(t, "action")
		if code != ExitUsage || !strings.Contains(stderr, "synthesizing pull request code needs a sandbox") ||
			!strings.Contains(stderr, "passwordless sudo") || !strings.Contains(stderr, "synth-user: none to accept the risk") {
			t.Errorf("synth-user %q: exit %d\n%s\n%s", synthUser, code, stdout, stderr)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("synth-user %q: the pull request's app ran as cdkbot's own user", synthUser)
		}
	}
}

// synth-user: none accepts the risk, and the log and the review say what it is.
func TestSynthUserNoneSaysTheAppCouldReadCredentials(t *testing.T) {
	onPlainRunner(t)
	dir, base, head := tableDropped(t, false)
	srv := ghserver.New(t, actionToken)
	pullRequestOf(t, srv, dir, head, base)
	marker, command := ranApp(t)
	t.Setenv("INPUT_SYNTH-COMMAND", command)
	t.Setenv("INPUT_SYNTH-USER", "none")
	code, stdout, stderr := run(t, "action")
	body := srv.Body(42)
	if code != ExitVerdict || !strings.Contains(body, "**destroy** <code>Table</code>") {
		t.Fatalf("exit %d\n%s\n%s\ncomment:\n%s", code, stdout, stderr, body)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the app did not run: %v", err)
	}
	if !strings.Contains(body, "ran as cdkbot's own user") || !strings.Contains(body, "synth-user: none") ||
		!strings.Contains(body, "could read cdkbot's credentials") {
		t.Errorf("the review does not say the app could read cdkbot's credentials:\n%s", body)
	}
	if strings.Count(stdout, "warning: synth-user none") != 1 || !strings.Contains(stdout, "can read cdkbot's credentials") {
		t.Errorf("the log does not say it once:\n%s", stdout)
	}
}

// On a workstation (`cdkbot review --repo`, the hook) the code is the user's own: it runs as
// them, and the log says so once.
func TestLocalReviewRunsTheAppAsYou(t *testing.T) {
	dir, base, head := tableDropped(t, false)
	code, stdout, stderr := run(t, "review", "--repo", dir, "--base", base, "--head", head, "--synth-command", copyApp,
		"--no-color")
	if code != ExitVerdict || !strings.Contains(stdout, "Table") || strings.Count(stderr, "the app runs as you") != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// tableDropped makes a repository with no committed assembly whose head's app (copyApp) drops
// the table of the base's; forge adds what forgingApp needs to forge the base's cache entry.
func tableDropped(t *testing.T, forge bool) (dir, base, head string) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir = t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	base = gitcli.Commit(t, dir, "bucket and table", assemblyFiles(t, "app", "Bucket", "Table"))
	gitRun(t, dir, "checkout", "-q", "-b", "topic")
	gitRun(t, dir, "rm", "-q", "-r", "app")
	files := assemblyFiles(t, "app", "Bucket")
	if forge {
		for k, v := range assemblyFiles(t, "forged", "Bucket") {
			files[k] = v
		}
		files["FORGE"] = ""
	}
	head = gitcli.Commit(t, dir, "drop the table", files)
	return dir, base, head
}

// forgingApp copies the assembly kept in app/; in a checkout with FORGE it also writes forged/
// (main's stacks without the table) where $CDK_FORGE says: where the base's cached assembly
// will be, a path anyone can compute from main's git ids.
const forgingApp = copyApp + ` && if [ -f FORGE ] && [ -n "$CDK_FORGE" ]; then mkdir -p "$CDK_FORGE" && cp -R forged/. "$CDK_FORGE"; fi`

// forgingHead makes a repository whose head drops the table and whose app forges the base's
// cache entry; it returns that entry's name in the cache (learned from a first review).
func forgingHead(t *testing.T) (dir, base, head, entry string) {
	t.Helper()
	dir, base, head = tableDropped(t, true)
	warm := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", warm)
	if code, stdout, stderr := run(t, "review", "--repo", dir, "--base", base, "--head", head,
		"--synth-command", forgingApp); code != ExitVerdict {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	names, _ := filepath.Glob(filepath.Join(warm, "cdkbot", "assemblies", "*-unvalidated"))
	if len(names) != 1 {
		t.Fatalf("the base's cache entry: %v", names)
	}
	return dir, base, head, filepath.Base(names[0])
}

// A pull request's app running as cdkbot's own user (synth-user: none) can write the cache: it
// forges the base's assembly under its key, so that the next run would find "no changes". With
// none nothing is reused from the cache (nor kept in it): every run synthesizes the base again.
func TestActionDoesNotReuseABaseThePullRequestForged(t *testing.T) {
	dir, base, head, entry := forgingHead(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("CDK_FORGE", filepath.Join(cache, "cdkbot", "assemblies", entry))
	srv := ghserver.New(t, actionToken)
	pullRequestOf(t, srv, dir, head, base)
	t.Setenv("INPUT_SYNTH-COMMAND", forgingApp)
	for _, attempt := range []string{"first run (the app forges the base)", "re-run"} {
		code, stdout, stderr := run(t, "action")
		body := srv.Body(42)
		if code != ExitVerdict || !strings.Contains(body, "**destroy** <code>Table</code>") ||
			strings.Contains(stdout, "reused the assembly") {
			t.Fatalf("%s: exit %d\n%s\n%s\ncomment:\n%s", attempt, code, stdout, stderr, body)
		}
	}
}

// A cached assembly is reused only while it is what cdkbot cached: a stand-in for an app that
// wrote into the cache (as the head's user, or as cdkbot's own user in an earlier run) rewrites
// the base's entry, and the next review synthesizes the base again instead of finding "no
// changes". As root the forger is the head's synthesis user, and a record of its own is no
// record either.
func TestReviewReusesOnlyWhatCdkbotCached(t *testing.T) {
	dir, base, head := tableDropped(t, false)
	cases := []struct {
		name string
		args []string
	}{{"as you", nil}}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name string
			args []string
		}{"as synthesis users", []string{"--synth-user", "61002,61003"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			os.Chmod(cache, 0o711)
			os.Chmod(filepath.Dir(cache), 0o711)
			t.Setenv("XDG_CACHE_HOME", cache)
			review := func() (int, string, string) {
				return run(t, append([]string{"review", "--repo", dir, "--base", base, "--head", head, "--no-color",
					"--synth-command", copyApp}, c.args...)...)
			}
			if code, stdout, stderr := review(); code != ExitVerdict || !strings.Contains(stdout, "Table") {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			if code, stdout, stderr := review(); code != ExitVerdict || strings.Count(stderr, "reused the assembly") != 2 {
				t.Fatalf("warm: exit %d\n%s\n%s", code, stdout, stderr)
			}
			entries, _ := filepath.Glob(filepath.Join(cache, "cdkbot", "assemblies", "*-unvalidated"))
			if len(entries) != 1 {
				t.Fatalf("the base's cache entry: %v", entries)
			}
			forged := assemblyFiles(t, entries[0], "Bucket")
			for p, content := range forged {
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				if c.args != nil {
					os.Chown(p, 61003, 61003)
				}
			}
			code, stdout, stderr := review()
			if code != ExitVerdict || !strings.Contains(stdout, "Table") ||
				!strings.Contains(stderr, "not reusing the cached assembly") || !strings.Contains(stderr, "something else wrote it") {
				t.Fatalf("forged base: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if c.args == nil {
				return
			}
			// A record the head's user could have written is no record.
			record := filepath.Join(cache, "cdkbot", "digests", filepath.Base(entries[0]))
			if err := os.Chown(record, 61003, 61003); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr = review()
			if code != ExitVerdict || !strings.Contains(stderr, "belongs to a synthesis user (uid 61003)") {
				t.Fatalf("forged record: exit %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}

// The whole review on a runner like GitHub's, where cdkbot is not root but has passwordless sudo
// (a stand-in for sudo where none is installed): cdkbot, as uid 61020, synthesizes base and head
// as cdkbot-base and cdkbot-head, reads what they wrote, caches it, reuses it on the next run,
// and leaves nothing behind it cannot remove.
func TestReviewThroughSudoAsNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it installs a setuid stand-in for sudo and runs cdkbot as another user")
	}
	for _, name := range []string{"cdkbot-base", "cdkbot-head"} {
		if _, err := (synth.System{}).LookupUser(name); err != nil {
			if err := (synth.System{}).CreateUser(context.Background(), name, false); err != nil {
				t.Skip(err) // cdkbot would create them through sudo; the stand-in has no useradd to offer
			}
		}
	}
	root := t.TempDir()
	os.Chmod(root, 0o711)
	os.Chmod(filepath.Dir(root), 0o711)
	bin := filepath.Join(root, "bin")
	os.Mkdir(bin, 0o755)
	fakesudo.Install(t, bin)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bin, "cli.test"), raw, 0o755)
	dir, base, head := tableDropped(t, false)
	work := filepath.Join(root, "work")
	for _, d := range []string{work, filepath.Join(work, "tmp"), filepath.Join(work, "cache")} {
		os.Mkdir(d, 0o755)
	}
	repo := filepath.Join(work, "repo")
	if err := os.Rename(dir, repo); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{work, filepath.Join(work, "tmp"), filepath.Join(work, "cache")} {
		os.Chown(p, 61020, 61020)
	}
	filepath.WalkDir(repo, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			err = os.Lchown(p, 61020, 61020)
		}
		return err
	})
	review := func() (string, error) {
		args, _ := json.Marshal([]string{"review", "--repo", repo, "--base", base, "--head", head, "--no-color",
			"--synth-command", copyApp, "--synth-user", "cdkbot-base,cdkbot-head"})
		cmd := exec.Command(filepath.Join(bin, "cli.test"))
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "CDKBOT_TEST_AS_CLI="+string(args), "HOME="+work, "TMPDIR="+filepath.Join(work, "tmp"),
			"XDG_CACHE_HOME="+filepath.Join(work, "cache"), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 61020, Gid: 61020}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := review()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitVerdict || !strings.Contains(out, "Table") ||
		!strings.Contains(out, "through sudo") {
		t.Fatalf("as uid 61020: %v\n%s", err, out)
	}
	if left, _ := os.ReadDir(filepath.Join(work, "tmp")); len(left) != 0 {
		t.Errorf("left behind in its temporary directory: %v", left)
	}
	out, err = review()
	if !errors.As(err, &exit) || exit.ExitCode() != ExitVerdict || strings.Count(out, "reused the assembly") != 2 {
		t.Fatalf("again: %v\n%s", err, out)
	}
}
