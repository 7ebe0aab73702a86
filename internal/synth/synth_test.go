//go:build unix

package synth

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// app writes a tiny "CDK app": plain node writing an assembly, recording what it saw.
const app = `const fs = require('fs'), path = require('path');
const out = process.env.CDK_OUTDIR;
const ctx = JSON.parse(process.env.CDK_CONTEXT_JSON || '{}');
if (process.argv[2] === 'fail') { console.log('building stacks'); throw new Error('Cannot find module aws-cdk-lib'); }
if (process.argv[2] === 'hang') { setInterval(() => {}, 1000); return; }
fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify({version: '55.0.0', artifacts: {}}));
fs.writeFileSync(path.join(out, 'seen.json'), JSON.stringify({
  token: process.env.GITHUB_TOKEN || null, secret: process.env.MY_SECRET || null, aws: process.env.AWS_SECRET_ACCESS_KEY || null,
  region: process.env.AWS_REGION || null, flag: ctx['@aws-cdk/core:newStyleStackSynthesis'], pathMeta: ctx['aws:cdk:enable-path-metadata'],
  lookup: ctx['vpc-provider:account=1'], validation: process.env.CDK_VALIDATION || null }));
`

func writeApp(t *testing.T, cdkJSON string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{"app.js": app, "cdk.json": cdkJSON, "cdk.context.json": `{"vpc-provider:account=1": {"vpcId": "vpc-1"}}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSynthScrubsSecretsAndPassesContext(t *testing.T) {
	dir := writeApp(t, `{"app": "node app.js", "context": {"@aws-cdk/core:newStyleStackSynthesis": true}}`)
	out := filepath.Join(t.TempDir(), "cdk.out")
	env := append(os.Environ(), "GITHUB_TOKEN=ghs_x", "MY_SECRET=s", "AWS_SECRET_ACCESS_KEY=k", "AWS_REGION=eu-west-1")
	var log strings.Builder
	if err := Run(context.Background(), Options{Dir: dir, OutDir: out, Env: env, Log: &log}); err != nil {
		t.Fatal(err)
	}
	var seen map[string]any
	b, _ := os.ReadFile(filepath.Join(out, "seen.json"))
	if err := json.Unmarshal(b, &seen); err != nil {
		t.Fatal(err)
	}
	if seen["token"] != nil || seen["secret"] != nil || seen["aws"] != nil {
		t.Errorf("secrets reached the app: %v", seen)
	}
	if seen["region"] != "eu-west-1" || seen["flag"] != true || seen["pathMeta"] != true || seen["lookup"] == nil {
		t.Errorf("context or plain environment lost: %v", seen)
	}
	if !strings.Contains(log.String(), `synthesizing with "node app.js"`) {
		t.Errorf("log: %s", log.String())
	}
}

// TestTemplateValidation: aws-cdk-lib's built-in validation is turned off only when asked and
// when it cannot decide whether the revision synthesizes; cdk.json's "validation": false turns
// it off as the CLI does.
func TestTemplateValidation(t *testing.T) {
	for _, tc := range []struct {
		name, cdkJSON string
		skip          bool
		want          any
	}{
		{"default", `{"app": "node app.js"}`, false, nil},
		{"skipped", `{"app": "node app.js"}`, true, "false"},
		{"cdk.json says no", `{"app": "node app.js", "validation": false}`, false, "false"},
		{"cdk.json says yes", `{"app": "node app.js", "validation": true}`, false, nil},
		{"strict errors fail synth", `{"app": "node app.js", "context": {"@aws-cdk/core:strictCfnValidateErrors": true}}`, true, nil},
		{"validation errors fail synth", `{"app": "node app.js", "context": {"@aws-cdk/core:failSynthOnValidationErrors": true}}`, true, nil},
		{"strict off", `{"app": "node app.js", "context": {"@aws-cdk/core:strictCfnValidateErrors": false}}`, true, "false"},
		{"strict as a string", `{"app": "node app.js", "context": {"@aws-cdk/core:strictCfnValidateErrors": "true"}}`, true, nil},
		{"not a boolean", `{"app": "node app.js", "validation": "no"}`, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeApp(t, tc.cdkJSON)
			out := filepath.Join(t.TempDir(), "cdk.out")
			var log strings.Builder
			if err := Run(context.Background(), Options{Dir: dir, OutDir: out, Env: os.Environ(), Log: &log, SkipTemplateValidation: tc.skip}); err != nil {
				t.Fatal(err)
			}
			var seen map[string]any
			b, _ := os.ReadFile(filepath.Join(out, "seen.json"))
			if err := json.Unmarshal(b, &seen); err != nil {
				t.Fatal(err)
			}
			if seen["validation"] != tc.want {
				t.Errorf("CDK_VALIDATION = %v, want %v\n%s", seen["validation"], tc.want, log.String())
			}
			if said := strings.Contains(log.String(), "template validation is off"); said != (tc.skip && tc.want == "false") {
				t.Errorf("log says validation is off: %v\n%s", said, log.String())
			}
		})
	}
}

func TestSynthFailureKeepsTheTail(t *testing.T) {
	dir := writeApp(t, `{"app": "node app.js fail"}`)
	err := Run(context.Background(), Options{Dir: dir, OutDir: filepath.Join(t.TempDir(), "o"), Env: os.Environ()})
	var se *Error
	if !errors.As(err, &se) || se.Stage != "synth" || !strings.Contains(se.Tail, "Cannot find module aws-cdk-lib") || !strings.Contains(se.Tail, "building stacks") {
		t.Fatalf("got %v", err)
	}
}

func TestSynthTimeoutStopsTheApp(t *testing.T) {
	dir := writeApp(t, `{"app": "node app.js hang"}`)
	start := time.Now()
	err := Run(context.Background(), Options{Dir: dir, OutDir: filepath.Join(t.TempDir(), "o"), Env: os.Environ(), Timeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "timed out") || time.Since(start) > 8*time.Second {
		t.Fatalf("got %v after %s", err, time.Since(start))
	}
}

func TestInstallIsCachedByLockFile(t *testing.T) {
	dir := writeApp(t, `{"app": "node app.js"}`)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name": "app", "version": "1.0.0"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(`{"name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "app", "version": "1.0.0"}}}`), 0o644)
	cache := t.TempDir()
	var log strings.Builder
	// An untrusted revision (the head) reads the cache but never fills it.
	if err := Run(context.Background(), Options{Dir: dir, OutDir: filepath.Join(t.TempDir(), "o0"), Env: os.Environ(), CacheDir: cache, ReadOnlyCache: true, Log: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Fatalf("a read-only run wrote the cache: %v", entries)
	}
	os.RemoveAll(filepath.Join(dir, "node_modules"))
	log.Reset()
	if err := Run(context.Background(), Options{Dir: dir, OutDir: filepath.Join(t.TempDir(), "o"), Env: os.Environ(), CacheDir: cache, Log: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), `installing dependencies with "npm ci`) {
		t.Errorf("no install: %s", log.String())
	}
	os.Remove(filepath.Join(dir, "node_modules"))
	log.Reset()
	if err := Run(context.Background(), Options{Dir: dir, OutDir: filepath.Join(t.TempDir(), "o2"), Env: os.Environ(), CacheDir: cache, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "dependencies from the cache") {
		t.Errorf("cache not used: %s", log.String())
	}
}

func TestNoAppCommand(t *testing.T) {
	err := Run(context.Background(), Options{Dir: t.TempDir(), OutDir: filepath.Join(t.TempDir(), "o")})
	if err == nil || !strings.Contains(err.Error(), `no cdk.json with an "app" command`) {
		t.Errorf("got %v", err)
	}
}

func TestScrub(t *testing.T) {
	got := Scrub([]string{"PATH=/bin", "GITHUB_TOKEN=x", "INPUT_GITHUB-TOKEN=y", "NPM_TOKEN=z", "AWS_REGION=r", "AWS_SESSION_TOKEN=s",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI=u", "DB_PASSWORD=p", "HOME=/root", "GITHUB_OUTPUT=/runner/out", "GITHUB_ENV=/runner/env",
		"API_KEY=k", "ACTIONS_ID_TOKEN_REQUEST_URL=u", "RUNNER_TEMP=/t", "LC_ALL=C.UTF-8", "CDK_DEFAULT_REGION=eu-west-1",
		"npm_config_registry=https://registry.example", "NPM_CONFIG__AUTH=secret", "SOME_SERVICE_URL=x"})
	want := "PATH=/bin AWS_REGION=r HOME=/root LC_ALL=C.UTF-8 CDK_DEFAULT_REGION=eu-west-1 npm_config_registry=https://registry.example"
	if strings.Join(got, " ") != want {
		t.Errorf("%v\nwant %s", got, want)
	}
}

// When `npm ci` fails on a lock file out of sync, the error keeps npm's reason, not its usage text.
func TestNpmUsageTextLeftOut(t *testing.T) {
	var out strings.Builder
	out.WriteString("npm error code EUSAGE\nnpm error\nnpm error `npm ci` can only install packages when your package.json and package-lock.json are in sync.\n")
	out.WriteString("npm error Missing: is-number@7.0.0 from lock file\nnpm error\nnpm error Clean install a project\nnpm error\nnpm error Usage:\nnpm error npm ci\n")
	for range 80 {
		out.WriteString("npm error   --some-option\n")
	}
	out.WriteString("npm error Run \"npm help ci\" for more info\nnpm error A complete log of this run can be found in: /root/.npm/_logs/x.log\n")
	tail := &tailBuffer{}
	tail.Write([]byte(out.String()))
	got := tail.String()
	if !strings.Contains(got, "Missing: is-number@7.0.0 from lock file") || strings.Contains(got, "--some-option") || !strings.Contains(got, `Run "npm help ci"`) {
		t.Errorf("tail:\n%s", got)
	}
}

// An app that leaves a process behind (a watcher, a "telemetry" daemon holding what it read)
// must not outlive synthesis: the whole process group is killed when the app exits.
func TestSynthLeavesNoProcessBehind(t *testing.T) {
	dir := writeApp(t, `{"app": "sleep 300 & echo $! > bg.pid; node app.js"}`)
	if err := Run(context.Background(), Options{Dir: dir, OutDir: filepath.Join(t.TempDir(), "o"), Env: os.Environ()}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "bg.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(raw))
	deadline := time.Now().Add(5 * time.Second)
	for {
		// A killed child of the (exited) shell is reaped by init; until then it is a zombie.
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("background process %s still running after synthesis: %s", pid, stat)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A child that leaves the process group (setsid) and keeps the output open cannot hold
// synthesis forever, and its escape fails the run instead of passing silently.
func TestSynthEscapedProcessFailsTheRun(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is not installed")
	}
	dir := writeApp(t, `{"app": "setsid sleep 30 & echo $! > bg.pid; node app.js"}`)
	t.Cleanup(func() {
		if raw, err := os.ReadFile(filepath.Join(dir, "bg.pid")); err == nil {
			exec.Command("kill", "-9", strings.TrimSpace(string(raw))).Run()
		}
	})
	defer func(g time.Duration) { escapeGrace = g }(escapeGrace)
	escapeGrace = 300 * time.Millisecond
	start := time.Now()
	err := Run(context.Background(), Options{Dir: dir, OutDir: filepath.Join(t.TempDir(), "o"), Env: os.Environ()})
	if err == nil || !strings.Contains(err.Error(), "outside its process group") || time.Since(start) > 10*time.Second {
		t.Fatalf("got %v after %s", err, time.Since(start))
	}
}

// probe is an app that tries what a hostile pull request would: read a file only cdkbot may
// read, read cdkbot's environment, and plant code in the dependency cache.
const probe = `const fs = require('fs'), path = require('path');
const tryRead = p => { try { return fs.readFileSync(p, 'utf8'); } catch (e) { return 'denied:' + e.code; } };
const seen = { file: tryRead(process.env.CDK_PROBE_FILE), environ: tryRead('/proc/' + process.env.CDK_PROBE_PID + '/environ'),
  uid: process.getuid(), home: process.env.HOME };
try { fs.writeFileSync(path.join('node_modules', 'planted.js'), 'evil'); seen.planted = true; } catch (e) { seen.planted = 'denied:' + e.code; }
fs.writeFileSync(path.join(process.env.CDK_OUTDIR, 'manifest.json'), JSON.stringify({version: '55.0.0', artifacts: {}}));
fs.writeFileSync(path.join(process.env.CDK_OUTDIR, 'seen.json'), JSON.stringify(seen));
`

func TestSynthAsAnotherUserCannotReachCdkbot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	root := t.TempDir()
	os.Chmod(root, 0o711) // others may pass through, not list
	os.Chmod(filepath.Dir(root), 0o711)
	secret := filepath.Join(root, "token")
	os.WriteFile(secret, []byte("ghs_secret"), 0o600)
	cache := filepath.Join(root, "cache")
	// A uid no other package's tests use: after a synthesis every process of its user is killed.
	user := &Identity{UID: 61001, GID: 61001}
	for _, rev := range []string{"head", "base"} {
		dir := filepath.Join(root, rev)
		writeProbeApp(t, dir, probe)
		out := filepath.Join(root, rev+".out")
		seen := runProbe(t, rev, dir, out, cache, secret, user)
		if seen["uid"] != float64(61001) || seen["file"] != "denied:EACCES" || seen["environ"] != "denied:EACCES" || seen["home"] != out+".home" {
			t.Errorf("%s: the app saw %v", rev, seen)
		}
		// The install (as the user) went to the cache and became cdkbot's before the app ran;
		// the second revision runs from that cache.
		if seen["planted"] != "denied:EACCES" {
			t.Errorf("%s: the app could write the shared dependency cache: %v", rev, seen["planted"])
		}
		fi, _ := os.Stat(filepath.Join(out, "manifest.json"))
		if owner, _ := ownerOf(fi); owner != 0 {
			t.Errorf("%s: the assembly still belongs to uid %d", rev, owner)
		}
	}
}

func TestSynthUserNeedsAReachableDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
	root := t.TempDir() // mode 0700
	dir := filepath.Join(root, "app")
	os.MkdirAll(dir, 0o755)
	err := Run(context.Background(), Options{Dir: dir, OutDir: filepath.Join(root, "out"), InstallCommand: "none", SynthCommand: "true", User: &Identity{UID: 61001, GID: 61001}})
	if err == nil || !strings.Contains(err.Error(), "cannot reach "+dir+": ") || !strings.Contains(err.Error(), "is mode 0700") {
		t.Fatalf("got %v", err)
	}
}

// writeProbeApp writes an app running appJS with one local dependency, so the install itself
// creates node_modules (as the synthesis user).
func writeProbeApp(t *testing.T, dir, appJS string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "dep"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"app.js": appJS, "cdk.json": `{"app": "node app.js"}`,
		"dep/package.json":  `{"name": "dep", "version": "1.0.0"}`,
		"package.json":      `{"name": "app", "version": "1.0.0", "dependencies": {"dep": "file:dep"}}`,
		"package-lock.json": `{"name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "app", "version": "1.0.0", "dependencies": {"dep": "file:dep"}}, "dep": {"version": "1.0.0"}, "node_modules/dep": {"resolved": "dep", "link": true}}}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runProbe synthesizes the probe app in dir into out as user, and returns what the probe saw
// (seen.json); the base revision must take its dependencies from the cache the head filled.
func runProbe(t *testing.T, rev, dir, out, cache, secret string, user *Identity) map[string]any {
	t.Helper()
	var log strings.Builder
	err := Run(context.Background(), Options{Dir: dir, OutDir: out, CacheDir: cache, User: user, Log: &log,
		Env: append(os.Environ(), "CDK_PROBE_FILE="+secret, "CDK_PROBE_PID="+strconv.Itoa(os.Getpid()))})
	if err != nil {
		t.Fatalf("%s: %v\n%s", rev, err, log.String())
	}
	if rev == "base" && !strings.Contains(log.String(), "dependencies from the cache") {
		t.Errorf("base did not use the cache:\n%s", log.String())
	}
	var seen map[string]any
	raw, _ := os.ReadFile(filepath.Join(out, "seen.json"))
	if err := json.Unmarshal(raw, &seen); err != nil {
		t.Fatalf("%s: %v: %s", rev, err, raw)
	}
	return seen
}
