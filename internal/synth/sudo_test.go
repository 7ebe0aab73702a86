//go:build unix

package synth

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/fakesudo"
)

// daemonProbe is the probe of synth_test.go plus what a postinstall script would leave behind:
// a daemon in a session of its own (setsid), whose pid it records.
const daemonProbe = `const cp = require('child_process');
const daemon = cp.spawn('sleep', ['300'], { detached: true, stdio: 'ignore' }); daemon.unref();
fs.writeFileSync(path.join(process.env.CDK_OUTDIR, 'daemon'), String(daemon.pid));
`

// probeAsUser installs and synthesizes the probe in root as user, twice (the second revision
// from the dependency cache), and checks that the app could read neither cdkbot's files nor its
// environment, could not plant code in the cache, left no daemon running, and that what it
// wrote is cdkbot's afterwards (readable, and removable even when cdkbot is not root).
func probeAsUser(t *testing.T, root string, user *Identity) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	secret := filepath.Join(root, "token")
	if err := os.WriteFile(secret, []byte("ghs_secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(root, "cache")
	for _, rev := range []string{"head", "base"} {
		dir := filepath.Join(root, rev)
		writeProbeApp(t, dir, probe+daemonProbe)
		out := filepath.Join(root, rev+".out")
		seen := runProbe(t, rev, dir, out, cache, secret, user)
		if seen["uid"] != float64(user.UID) || seen["file"] != "denied:EACCES" || seen["environ"] != "denied:EACCES" ||
			seen["home"] != out+".home" || seen["planted"] != "denied:EACCES" {
			t.Errorf("%s: the app saw %v", rev, seen)
		}
		pid, _ := os.ReadFile(filepath.Join(out, "daemon"))
		if alive(strings.TrimSpace(string(pid))) {
			t.Errorf("%s: the app's daemon (pid %s) outlived the synthesis", rev, pid)
		}
		for _, p := range []string{out, filepath.Join(out, "manifest.json"), dir, filepath.Join(dir, "node_modules")} {
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if owner, _ := ownerOf(fi); int(owner) != os.Geteuid() {
				t.Errorf("%s: %s still belongs to uid %d", rev, p, owner)
			}
		}
	}
	// An app that never ends is stopped at the timeout, even where cdkbot may not signal it.
	dir := filepath.Join(root, "hang")
	os.Mkdir(dir, 0o755)
	start := time.Now()
	err := Run(context.Background(), Options{Dir: dir, OutDir: filepath.Join(root, "hang.out"), InstallCommand: "none",
		SynthCommand: "sleep 300", Timeout: time.Second, User: user, Env: os.Environ()})
	if err == nil || !strings.Contains(err.Error(), "timed out") || time.Since(start) > 30*time.Second {
		t.Errorf("a hanging app: %v after %v", err, time.Since(start))
	}
	for _, p := range []string{"head", "head.out", "head.out.home", "base", "base.out", "base.out.home", "cache",
		"hang", "hang.out", "hang.out.home"} {
		if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
			t.Errorf("cdkbot cannot remove what the app wrote: %v", err)
		}
	}
}

// alive reports whether pid runs (a zombie waiting for its parent does not).
func alive(pid string) bool {
	for range 50 {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return false
		}
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// synthesisUser is one of cdkbot's synthesis users, created (through sudo when sudo is set) if
// it does not exist, as the review pipeline does on a runner.
// testUser is the synthesis user of this package's tests: a user of its own, since making sure a
// synthesis leaves nothing running kills every process of its user, and other packages' tests run
// at the same time with the image's users.
const testUser = "cdkbot-synthtest"

func synthesisUser(t *testing.T, name string, sudo bool) *Identity {
	t.Helper()
	id, err := System{}.LookupUser(name)
	if err == ErrNoUser {
		if err := (System{}).CreateUser(context.Background(), name, sudo); err != nil {
			t.Fatal(err)
		}
		id, err = System{}.LookupUser(name)
	}
	if err != nil {
		t.Fatal(err)
	}
	id.Sudo = sudo
	return id
}

// reachableTempDir is a temporary directory others may pass through (not list), as a
// synthesis user must to reach its checkout.
func reachableTempDir(t *testing.T) string {
	root := t.TempDir()
	os.Chmod(root, 0o711)
	os.Chmod(filepath.Dir(root), 0o711)
	return root
}

// The sudo path for real, as on a GitHub-hosted runner where cdkbot is not root but has
// passwordless sudo: the synthesis user is created through sudo, install and synthesis run
// through `sudo -n -u`, files change hands through `sudo chown`. Root may run anything through
// sudo, so root runs it here.
func TestSynthThroughSudo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it creates a synthesis user, and root may use sudo without a sudoers entry")
	}
	if _, err := exec.LookPath("sudo"); err != nil {
		t.Skip("sudo is not installed here, so the sudo path is not tested (the test installs nothing)")
	}
	if !(System{}).Sudo(context.Background()) {
		t.Skip("`sudo -n true` fails for root here")
	}
	probeAsUser(t, reachableTempDir(t), synthesisUser(t, testUser, true))
}

// The sudo path as it runs on a hosted runner, cdkbot not root, where sudo is not installed: a
// stand-in for sudo (testutil/fakesudo, setuid root) runs commands as sudo would, and the test
// binary runs the probe again as an unprivileged user of its own (uid 61020). What that user
// cannot do itself (enter the synthesis user's checkout, read the files the app left with any
// mode, remove them) it must not need to.
func TestSynthThroughSudoAsNonRoot(t *testing.T) {
	if work := os.Getenv("CDKBOT_TEST_SUDO_CHILD"); work != "" {
		probeAsUser(t, work, synthesisUser(t, testUser, true))
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: it installs a setuid stand-in for sudo and runs cdkbot as another user")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	root := reachableTempDir(t)
	bin := filepath.Join(root, "bin")
	os.Mkdir(bin, 0o755)
	fakesudo.Install(t, bin)
	synthesisUser(t, testUser, false) // made by root here; a runner would make it through sudo
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "synth.test"), raw, 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(root, "work")
	os.Mkdir(work, 0o755)
	os.Chown(work, 61020, 61020)
	child := exec.Command(filepath.Join(bin, "synth.test"), "-test.run=^TestSynthThroughSudoAsNonRoot$", "-test.v")
	child.Dir = work
	child.Env = append(os.Environ(), "CDKBOT_TEST_SUDO_CHILD="+work, "HOME="+work, "TMPDIR="+work,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	child.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 61020, Gid: 61020}}
	out, err := child.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as uid 61020: %v\n%s", err, out)
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "%s", out)
	}
}
