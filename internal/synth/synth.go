// Package synth runs a CDK app to produce its cloud assembly, the way the CDK CLI does but
// without it: install dependencies (cached by lock file), run cdk.json's "app" with CDK_OUTDIR
// and CDK_CONTEXT_JSON, under a timeout, with credentials and tokens removed from the
// environment (the app is pull-request code), keeping the output's tail for errors.
package synth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Options describe one synthesis.
type Options struct {
	Dir            string        // the app's directory (a checkout of one revision)
	Root           string        // the checkout Dir is in, when Dir is a subdirectory of it ("" is Dir)
	OutDir         string        // where the assembly goes (created)
	InstallCommand string        // "" detects from the lock file; "none" skips installing
	SynthCommand   string        // "" uses cdk.json's "app"
	Timeout        time.Duration // for install and synth together (default 10 minutes)
	Env            []string      // the environment to start from (os.Environ()); secrets are removed
	CacheDir       string        // node_modules cache by lock-file hash; "" disables it
	// Context is given to the app on top of its own, as the CDK CLI's -c key=value: one
	// environment of the app (stage=prod).
	Context map[string]string
	// ReadOnlyCache uses the cache without adding to it: what an untrusted revision's install
	// scripts wrote must never be what another revision (the base, a deploy) runs.
	ReadOnlyCache bool
	Log           io.Writer // progress and the commands' output (nil discards)
	// SkipTemplateValidation turns off aws-cdk-lib's built-in template validation (CDK_VALIDATION=
	// false), for a revision whose findings nobody acts on (the base of a review): it is most of
	// a synthesis (a 9 MB WebAssembly validator). Kept when the app's context makes validation
	// errors fail the synthesis, so a revision that `cdk synth` refuses is refused here too.
	SkipTemplateValidation bool
	// User, when set, is the unprivileged identity install and synthesis run as (cdkbot is root,
	// or reaches it through passwordless sudo): the app then cannot read cdkbot's memory,
	// environment or files, and cannot change the dependency cache other revisions will use.
	User *Identity
}

// Identity is a numeric user and group, and how cdkbot becomes it.
type Identity struct {
	UID, GID uint32
	// Sudo: cdkbot is not root and runs commands as this user through passwordless sudo
	// (`sudo -n`, as GitHub-hosted runners allow), handing files over with `sudo chown`.
	Sudo bool
	// lent are the directories the user gets for each command it runs (the checkout, the
	// output, its HOME) and gives back to cdkbot when it ends.
	lent []string
}

// reclaim gives a tree the app wrote back to cdkbot, so that the app can no longer change it.
func reclaim(root string) error {
	return chownTree(root, uint32(os.Geteuid()), uint32(os.Getegid()))
}

// Error is a failed stage with the tail of its output.
type Error struct {
	Stage   string // install | synth
	Command string
	Tail    string
	Err     error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (%s) failed: %v\n--- last lines of output ---\n%s", e.Stage, e.Command, e.Err, e.Tail)
}

func (e *Error) Unwrap() error { return e.Err }

// Summary is the failure in one line with its likely cause: the first error line of the
// output (npm's "code E…" lines and blank error lines skipped), else the last line.
func (e *Error) Summary() string {
	cause, last := "", ""
	for _, l := range strings.Split(e.Tail, "\n") {
		t := strings.TrimSpace(l)
		body := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(t, "npm error"), "npm ERR!"))
		if body == "" || strings.HasPrefix(body, "code ") {
			continue
		}
		last = t
		if cause == "" && (strings.Contains(strings.ToLower(t), "error") || strings.HasPrefix(t, "npm ERR!")) {
			cause = t
		}
	}
	if cause == "" {
		cause = last
	}
	out := fmt.Sprintf("%s (%s) failed: %v", e.Stage, e.Command, e.Err)
	if cause != "" {
		out += ": " + cause
	}
	return out
}

// tailLines is how much output an error keeps.
const tailLines = 40

// Run installs and synthesizes; on success the assembly is in opts.OutDir.
func Run(ctx context.Context, o Options) error {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	env := Scrub(o.Env)
	if o.User != nil {
		var err error
		if env, o.User, err = o.sandbox(env); err != nil {
			return err
		}
	}
	tc, marker := detect(o.Dir)
	install, lock := detectInstall(tc, marker, o.InstallCommand)
	if install != "" && o.InstallCommand == "" && !lookPath(env, o.Dir, tc.tool) {
		return missingTool(tc.language, marker, tc.tool, install)
	}
	if install != "" {
		if err := o.installWithCache(ctx, install, lock, env); err != nil {
			return err
		}
	}
	if tc != nil && tc.venv {
		env = venvEnv(env, o.Dir)
	}
	app, err := o.readApp()
	if err != nil {
		return err
	}
	synth := app.command
	if prog := firstProgram(synth); prog != "" && !lookPath(env, o.Dir, prog) && !shellBuiltin[prog] {
		language, why := "CDK", "cdk.json"
		if tc != nil {
			language, why = tc.language, marker
		}
		return missingTool(language, why, prog, synth)
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return err
	}
	ctxJSON, _ := json.Marshal(app.context)
	env = append(env, "CDK_OUTDIR="+o.OutDir, "CDK_CONTEXT_JSON="+string(ctxJSON), "CDK_CLI_ASM_VERSION=", "CI=true")
	switch {
	case app.validation != nil && !*app.validation:
		env = append(env, "CDK_VALIDATION=false") // cdk.json's "validation": false, as the CLI passes it
	case o.SkipTemplateValidation && !app.validationCanFail():
		env = append(env, "CDK_VALIDATION=false")
		fmt.Fprintln(o.Log, "cdkbot: aws-cdk-lib's template validation is off for this revision (CDK_VALIDATION=false)")
	}
	fmt.Fprintf(o.Log, "cdkbot: synthesizing with %q\n", synth)
	// The assembly is cdkbot's once run returns (it may be cached and read again later).
	if err := run(ctx, "synth", synth, o.Dir, env, o.User, o.Log); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(o.OutDir, "manifest.json")); err != nil {
		return &Error{Stage: "synth", Command: synth, Err: fmt.Errorf(
			"the app wrote no manifest.json to CDK_OUTDIR; does it call app.synth()?")}
	}
	return nil
}

// detectInstall picks the install command: the explicit one ("none" for none), else the one
// of the app's toolchain; lock is the lock file node_modules are cached by ("" for none).
func detectInstall(tc *toolchain, marker, explicit string) (cmd, lock string) {
	switch {
	case explicit == "none":
		return "", ""
	case explicit != "":
		return explicit, ""
	case tc == nil:
		return "", ""
	case tc.nodeLock:
		return tc.install, marker
	}
	return tc.install, ""
}

// installWithCache runs the install, reusing the node_modules directories (the app's and those
// its install scripts wrote below it) of an earlier install of the same lock files.
func (o Options) installWithCache(ctx context.Context, install, lock string, env []string) error {
	var entry string
	useCache := o.CacheDir != "" && lock != ""
	if useCache && o.User != nil {
		// The synthesis user must be able to read the cache; if it cannot, install afresh.
		useCache = os.MkdirAll(o.CacheDir, 0o755) == nil &&
			reachable(filepath.Join(o.CacheDir, "node_modules"), o.User.UID) == nil
	}
	// Read whether cached or not: a lock file cdkbot refuses (a link out of the checkout, a
	// device) stops the install before the package manager reads it.
	key, err := o.lockKey(install, lock)
	if err != nil {
		return err
	}
	if useCache && key != "" {
		entry = filepath.Join(o.CacheDir, key)
		if _, err := os.Stat(entry); err == nil {
			fmt.Fprintf(o.Log, "cdkbot: dependencies from the cache (%s)\n", lock)
			return o.fromCache(entry)
		}
	}
	fmt.Fprintf(o.Log, "cdkbot: installing dependencies with %q\n", install)
	if err := run(ctx, "install", install, o.Dir, env, o.User, o.Log); err != nil {
		return err
	}
	if entry != "" && !o.ReadOnlyCache {
		if _, err := o.toCache(entry); err != nil {
			return err
		}
	}
	return nil
}

// appConfig is what cdk.json says about running the app.
type appConfig struct {
	command    string
	context    map[string]any // merged as the CLI merges it, with its metadata defaults
	validation *bool          // the CLI setting "validation" (false passes CDK_VALIDATION=false)
}

// validationCanFail reports whether the app's context makes validation findings fail the
// synthesis (then validation decides whether the revision synthesizes at all).
func (a appConfig) validationCanFail() bool {
	for _, k := range []string{"@aws-cdk/core:failSynthOnValidationErrors", "@aws-cdk/core:strictCfnValidateErrors"} {
		switch v := a.context[k].(type) {
		case bool:
			if v {
				return true
			}
		case string: // -c key=true style values are strings
			if strings.EqualFold(v, "true") {
				return true
			}
		}
	}
	return false
}

// escapeGrace is how long output may stay open after the app's group is killed.
var escapeGrace = 10 * time.Second

// run executes a shell command in its own process group; on timeout the group gets SIGINT,
// then SIGKILL after a grace period. When the command exits, whatever it left running in its
// group is killed: the output goes through a pipe we own, so a background child holding it
// open cannot keep synthesis (or its secrets) alive. As a synthesis user, the command gets its
// directories for its run only: once every process of the user is gone they are cdkbot's
// again, so cdkbot reads what the app wrote (even when cdkbot is not root) and the app can no
// longer change it.
func run(ctx context.Context, stage, command, dir string, env []string, user *Identity, log io.Writer) error {
	tail := &tailBuffer{}
	r, w, err := os.Pipe()
	if err != nil {
		return &Error{Stage: stage, Command: command, Err: err}
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(io.MultiWriter(log, tail), r)
	}()
	cmd := shellCommand(ctx, command)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = w, w
	if err := inOwnGroup(cmd, user); err != nil {
		w.Close()
		r.Close()
		return &Error{Stage: stage, Command: command, Err: err}
	}
	if user != nil {
		if err := user.chownAll(user.UID, user.GID, user.lent...); err != nil {
			w.Close()
			r.Close()
			return &Error{Stage: stage, Command: command, Err: fmt.Errorf("hand the checkout to uid %d: %w", user.UID, err)}
		}
	}
	cmd.Cancel = func() error { return interruptGroup(cmd) }
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Start()
	w.Close() // the children hold the only write ends now
	if err == nil {
		waited := make(chan struct{})
		if user != nil && user.Sudo {
			// What runs through sudo may be beyond cdkbot's signals: past the grace period the
			// timeout kills it as its user, so that Wait returns.
			go func() {
				select {
				case <-waited:
				case <-ctx.Done():
					select {
					case <-waited:
					case <-time.After(cmd.WaitDelay):
						killUser(user)
					}
				}
			}()
		}
		err = cmd.Wait()
		close(waited)
		killGroup(cmd) // leftovers of the group
		if user != nil {
			killUser(user) // everything the synthesis user still runs, in or out of the group, is the app's
		}
	}
	select {
	case <-copied: // every holder of the pipe is gone: EOF
	case <-time.After(escapeGrace): // a process that left the group still holds it
		if err == nil {
			err = errors.New("a process the app started outside its process group kept running")
		}
	}
	r.Close()
	if user != nil {
		back := user.chownAll(uint32(os.Geteuid()), uint32(os.Getegid()), user.lent...)
		if back != nil && err == nil {
			err = fmt.Errorf("take the checkout back from uid %d: %w", user.UID, back)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out: %w", ctx.Err())
		}
		return &Error{Stage: stage, Command: command, Tail: tail.String(), Err: err}
	}
	return nil
}

// tailBuffer keeps the last lines written to it.
type tailBuffer struct{ buf bytes.Buffer }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if t.buf.Len() > 256<<10 {
		b := t.buf.Bytes()
		t.buf = *bytes.NewBuffer(append([]byte(nil), b[len(b)-128<<10:]...))
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	lines := dropUsage(strings.Split(strings.TrimRight(t.buf.String(), "\n"), "\n"))
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return strings.Join(lines, "\n")
}

// dropUsage removes the usage text npm prints after a usage error (EUSAGE, such as `npm ci` with
// a lock file out of sync): 80 lines of options that would push the cause out of the tail. It
// starts at "Usage:" and ends before `Run "npm help …"`.
func dropUsage(lines []string) []string {
	start := -1
	for i, l := range lines {
		text := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "npm error"), "npm ERR!"))
		switch {
		case start < 0 && text == "Usage:" && (strings.HasPrefix(l, "npm error") || strings.HasPrefix(l, "npm ERR!")):
			start = i
		case start >= 0 && strings.HasPrefix(text, `Run "npm help`):
			return append(append(lines[:start:start], "npm error (npm's usage text left out)"), lines[i:]...)
		}
	}
	return lines
}

// secretish names environment variables that carry credentials.
func secretish(name string) bool {
	u := strings.ToUpper(name)
	for _, exact := range []string{
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE",
		"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "ACTIONS_RUNTIME_URL", "ACTIONS_CACHE_URL",
	} {
		if u == exact {
			return true
		}
	}
	for _, part := range []string{"TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "PRIVATE_KEY", "_AUTH", "AWS_CONTAINER_"} {
		if strings.Contains(u, part) {
			return true
		}
	}
	return false
}

// Scrub builds the app's environment from an allow-list: what toolchains and package managers
// need (PATH, HOME, locale, proxies and certificates, CDK_*, npm/yarn/pnpm/pip/maven/gradle/nuget
// settings), never the runner's GITHUB_*/ACTIONS_*/INPUT_*/RUNNER_* variables (tokens, and the
// file-command paths through which an app could write step outputs), and never a variable whose
// name says it is a credential.
func Scrub(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if allowed(name) && !secretish(name) {
			out = append(out, kv)
		}
	}
	return out
}

var allowedNames = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "TMPDIR": true, "TEMP": true, "TMP": true, "CI": true,
	"NODE_OPTIONS": true, "NODE_PATH": true, "NODE_EXTRA_CA_CERTS": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true,
	"JAVA_HOME": true, "GOPATH": true, "GOCACHE": true, "GOMODCACHE": true, "GOFLAGS": true, "GOPROXY": true,
	"DOTNET_ROOT": true, "VIRTUAL_ENV": true, "PYTHONPATH": true, "PYENV_ROOT": true, "COREPACK_HOME": true,
	"AWS_REGION": true, "AWS_DEFAULT_REGION": true,
}

var allowedPrefixes = []string{
	"LC_", "CDK_", "JSII_", "NPM_CONFIG_", "YARN_", "PNPM_", "PIP_", "MAVEN_", "GRADLE_", "NUGET_", "POETRY_", "UV_",
}

func allowed(name string) bool {
	u := strings.ToUpper(name)
	if allowedNames[u] {
		return true
	}
	for _, p := range allowedPrefixes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// sandbox prepares the checkout, the output directory and a HOME of its own (npm writes its
// cache and logs there) for o.User, after checking it can reach them: the user it returns gets
// them for each command it runs (see run).
func (o Options) sandbox(env []string) ([]string, *Identity, error) {
	if !o.User.Sudo && os.Geteuid() != 0 {
		return nil, nil, fmt.Errorf("synthesis as uid %d needs cdkbot to run as root or with passwordless sudo "+
			"(it runs as uid %d); run without a synthesis user, as root, or with sudo", o.User.UID, os.Geteuid())
	}
	home := strings.TrimSuffix(o.OutDir, string(filepath.Separator)) + ".home"
	for _, d := range []string{o.OutDir, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, nil, err
		}
	}
	tree := o.Dir
	if o.Root != "" {
		tree = o.Root // the app may read its workspace files above Dir
	}
	for _, d := range []string{tree, o.OutDir, home} {
		if err := reachable(d, o.User.UID); err != nil {
			return nil, nil, err
		}
	}
	user := *o.User
	user.lent = []string{tree, o.OutDir, home}
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+home), &user, nil
}

// reachable reports an ancestor of dir that uid cannot pass through (no search permission for
// others), naming it, instead of a permission error from deep inside npm.
func reachable(dir string, uid uint32) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if owner, ok := ownerOf(fi); ok && owner != uid && fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("the synthesis user (uid %d) cannot reach %s: %s is mode %04o; "+
				"give others search permission (chmod o+x) or work under another directory", uid, dir, p, fi.Mode().Perm())
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// chownTree gives a tree to uid:gid without following symbolic links.
func chownTree(root string, uid, gid uint32) error {
	return filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(uid), int(gid))
	})
}

// Fingerprint hashes a directory tree (names, modes, contents and link targets) so cdkbot can
// tell whether anything changed it since: an assembly is fingerprinted when its synthesis ends.
func Fingerprint(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%q %o\n", rel, info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "-> %q\n", target)
		case info.Mode().IsRegular():
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(h, f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("fingerprint %s: %w", dir, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
