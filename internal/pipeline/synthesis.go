package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/gitrepo"
	"github.com/cdkbot/cdkbot/internal/synth"
	"golang.org/x/sync/errgroup"
)

// guardBase fingerprints the base assembly before the head's app runs; the check it returns
// fails, and removes the base (it may sit in the cache), if anything changed it since: pull
// request code must not rewrite what it is compared against.
func guardBase(dir string) (check func() error, err error) {
	before, err := synth.Fingerprint(dir)
	if err != nil {
		return nil, err
	}
	return func() error {
		if after, err := synth.Fingerprint(dir); err == nil && after == before {
			return nil
		}
		os.RemoveAll(dir) // tainted: never reused
		return fmt.Errorf("the base assembly (%s) changed while the head was synthesized: "+
			"the pull request's app wrote to it, so nothing can be compared; "+
			"synthesize as another user (--synth-user, the action's synth-user)", dir)
	}, nil
}

// unvalidated marks a cached assembly synthesized without aws-cdk-lib's template validation.
const unvalidated = "-unvalidated"

// synthJob is one revision to synthesize: prepared one after the other, run side by side.
type synthJob struct {
	name, rev, sha string
	dst            *string
	src, appDir    string    // the checkout of the app's inputs, and the app's directory in it
	appRel         string    // the app's directory in the repository ("" for its root)
	inputs         []string  // the repository paths checked out for it
	also           *synthJob // the head, when its inputs are the base's: it gets this result
	key            string    // what the synthesis reads, as a cache key
	cached         string    // an assembly synthesized earlier from the same inputs
	store          string    // where to cache the result ("" without a cache)
	untrusted      []string  // cached assemblies found for its inputs that cdkbot cannot vouch for
	out            string    // the assembly, once synthesized
	err            error
	committed      bool // its committed assembly was looked for (and there was none)
}

// synthInputs lists what a synthesis of the app at appRel may read, as repository paths: the
// app's directory, the workspace files above it, and what the user adds (--synth-inputs).
// Only these are checked out, so the cache key (their git ids) covers everything the app
// can see: an app that reads elsewhere fails to synthesize instead of being reused stale.
func synthInputs(appRel string, extra []string) []string {
	paths := []string{appRel}
	if appRel != "" {
		for d := path.Dir(appRel); ; d = path.Dir(d) {
			if d == "." {
				d = ""
			}
			for _, f := range synth.WorkspaceFiles() {
				paths = append(paths, path.Join(d, f))
			}
			if d == "" {
				break
			}
		}
	}
	for _, e := range extra {
		if e = strings.Trim(path.Clean("/"+filepath.ToSlash(e)), "/"); e != "" || appRel != "" {
			paths = append(paths, e)
		}
	}
	return paths
}

// appDir is dir as a slash path of repo ("" for its top, or a directory outside it).
func appDir(repo *gitrepo.Repo, dir string) string {
	rel, err := filepath.Rel(realPath(repo.Root()), realPath(dir))
	if err != nil || strings.HasPrefix(rel, "..") || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// prepareSynth finds a revision's assembly in the cache, keyed by the git ids of what its
// synthesis reads, or checks those inputs out, into a directory only its synthesis user may open.
func prepareSynth(repo *gitrepo.Repo, sha, dir, tmp, name string, opts ReviewOptions) (*synthJob, error) {
	appRel := appDir(repo, dir)
	inputs := synthInputs(appRel, opts.SynthInputs)
	h := sha256.New()
	fmt.Fprintf(h, "cdkbot synth v1\x00%s\x00%s\x00%s\x00", opts.InstallCommand, opts.SynthCommand, appRel)
	for _, k := range slices.Sorted(maps.Keys(opts.Context)) { // none: the keys stay as they were
		fmt.Fprintf(h, "-c %s=%s\x00", k, opts.Context[k])
	}
	ids, err := synthInputIDs(repo, sha, inputs, appRel)
	if err != nil {
		return nil, err
	}
	for i, p := range inputs {
		fmt.Fprintf(h, "%s=%s\x00", p, ids[i])
	}
	job := &synthJob{name: name, sha: sha, key: hex.EncodeToString(h.Sum(nil))[:32], appRel: appRel}
	if root := opts.cache; root != "" {
		job.store = filepath.Join(root, "assemblies", job.key)
		// A base may reuse an assembly synthesized without template validation; a head may not.
		candidates := []string{job.store}
		if name == "base" {
			candidates = append(candidates, job.store+unvalidated)
		}
		for _, c := range candidates {
			if _, err := os.Lstat(c); err != nil {
				continue
			}
			if why := distrust(root, c, opts.synthUsers); why != "" {
				if opts.Log != nil {
					fmt.Fprintf(opts.Log, "cdkbot: %s (%s): not reusing the cached assembly %s: %s; synthesizing it again\n",
						name, commitid.Short(sha, commitid.Unambiguous), filepath.Base(c), why)
				}
				job.untrusted = append(job.untrusted, c) // replaced by this synthesis's result
				continue
			}
			if _, err := os.Stat(filepath.Join(c, "manifest.json")); err == nil {
				if opts.Log != nil {
					fmt.Fprintf(opts.Log, "cdkbot: %s (%s): reused the assembly synthesized from the same inputs "+
						"(key %s): none of %s changed\n",
						name, commitid.Short(sha, commitid.Unambiguous), job.key[:12], describeInputs(appRel, opts.SynthInputs))
				}
				job.cached = c
				return job, nil
			}
		}
	}
	job.inputs = inputs
	job.src = filepath.Join(tmp, name+"-src")
	job.appDir = filepath.Join(job.src, filepath.FromSlash(appRel))
	job.out = filepath.Join(tmp, name+"-synth")
	return job, nil
}

// checkout writes the job's inputs at its revision into a directory of its own.
func (j *synthJob) checkout(repo *gitrepo.Repo) error {
	if err := os.Mkdir(j.src, 0o700); err != nil {
		return err
	}
	if err := materializeInputs(repo, j); err != nil {
		return err
	}
	if _, err := os.Stat(j.appDir); err != nil {
		return fmt.Errorf("%s has no %s", commitid.Short(j.sha, commitid.Unambiguous), j.appRel)
	}
	return nil
}

// realPath is p absolute with its symbolic links resolved (a relative --repo, /tmp on macOS),
// or p when it cannot be resolved.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

func describeInputs(appRel string, extra []string) string {
	what := "the app's directory"
	if appRel != "" {
		what = appRel + "/ (with the workspace files above it)"
	}
	if len(extra) > 0 {
		what += ", " + strings.Join(extra, ", ")
	}
	return what
}

// runSynthJobs synthesizes the revisions, up to --synth-concurrency at a time. Side by side
// only when each side runs as a user of its own: as one user the head's app could rewrite the
// base's assembly before it is fingerprinted, so then the base goes first and is fingerprinted
// before the head's app starts.
func runSynthJobs(ctx context.Context, jobs []*synthJob, opts ReviewOptions) error {
	limit := max(opts.SynthConcurrency, 1)
	if b, h := opts.synthUsers["base"], opts.synthUsers["head"]; limit > 1 && (b == nil || h == nil || b.UID == h.UID) {
		limit = 1
		if opts.Log != nil && len(jobs) > 1 {
			fmt.Fprintln(opts.Log, "cdkbot: synthesizing the base, then the head: "+
				"side by side needs a synthesis user for each (--synth-user BASE,HEAD, as root)")
		}
	}
	var base *synthJob
	for _, j := range jobs {
		if j.name == "base" {
			base = j
		}
	}
	var baseCheck func() error // the base assembly's fingerprint, taken before the head's app may touch it
	if base == nil && opts.BaseAssembly != "" {
		var err error
		if baseCheck, err = guardBase(opts.BaseAssembly); err != nil {
			return err
		}
	}
	var g errgroup.Group
	g.SetLimit(limit) // with a limit of 1 the head starts only once the base's goroutine is done
	logs := newSideLogs(opts.Log, len(jobs) > 1 && limit > 1)
	var guardErr error
	modules := nodeModulesCache(opts.cache)
	for _, j := range jobs {
		// The base's template-validation findings are about what is merged already; nobody acts
		// on them. Unless the same synthesis also serves as the head.
		skipValidation := j.name == "base" && j.also == nil
		if skipValidation && j.store != "" {
			j.store += unvalidated
		}
		g.Go(func() error {
			j.err = synth.Run(ctx, synth.Options{Dir: j.appDir, Root: j.src, OutDir: j.out, InstallCommand: opts.InstallCommand,
				SynthCommand: opts.SynthCommand, Context: opts.Context, Timeout: opts.SynthTimeout, Env: os.Environ(),
				CacheDir: modules, ReadOnlyCache: j.name != "base", Log: logs.side(j.name), User: opts.synthUsers[j.name],
				SkipTemplateValidation: skipValidation})
			if j == base && j.err == nil && len(jobs) > 1 {
				// Fingerprinted as soon as it exists; the head's app may still be running.
				baseCheck, guardErr = guardBase(j.out)
			}
			return nil
		})
	}
	g.Wait()
	logs.flush()
	if guardErr == nil && baseCheck != nil {
		guardErr = baseCheck() // whether the head's app succeeded or not; a changed base is removed
	}
	for _, j := range jobs {
		if j.err == nil && j.store != "" && !(j == base && guardErr != nil) {
			if slices.Contains(j.untrusted, j.store) {
				os.RemoveAll(j.store)
			}
			if err := os.MkdirAll(filepath.Dir(j.store), 0o755); err == nil && os.Rename(j.out, j.store) == nil {
				j.out = j.store
				// Readable by others: actions/cache saves the cache as the runner's user.
				if shareReadable(j.store) == nil {
					if err := recordCached(opts.cache, j.store); err != nil && opts.Log != nil {
						fmt.Fprintf(opts.Log, "cdkbot: %s: the assembly is cached but will not be reused: %v\n", j.name, err)
					}
				}
			}
		}
	}
	return guardErr
}

// shareReadable lets anyone read a tree and nobody but cdkbot write it (0644 files, 0755
// directories and executables): an assembly is no secret, and the Actions cache saves it as the
// runner's user, not as the root of the container. Fixed modes also survive the cache's round
// trip, so the fingerprint cdkbot records is the one it finds when the cache is restored.
func shareReadable(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if d.IsDir() || fi.Mode().Perm()&0o111 != 0 {
			mode = 0o755
		}
		if fi.Mode().Perm() == mode {
			return nil
		}
		return os.Chmod(p, mode)
	})
}

// digests is the cache's directory of fingerprints: one file per cached assembly, named as
// its directory, holding the synth.Fingerprint cdkbot took when it cached it.
const digests = "digests"

// recordCached records the fingerprint of an assembly cdkbot has just cached.
func recordCached(cache, store string) error {
	fp, err := synth.Fingerprint(store)
	if err != nil {
		return err
	}
	dir := filepath.Join(cache, digests)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	name := filepath.Base(store)
	tmp := fmt.Sprintf(".%s.%d", name, os.Getpid())
	if err := root.WriteFile(tmp, []byte(fp+"\n"), 0o644); err != nil {
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// distrust says why the cached assembly at entry must not be reused ("" when it may be): cdkbot
// reuses only what it can tell no pull request code wrote, an assembly whose fingerprint is
// the one it recorded when it cached it. An app that wrote into the cache (as cdkbot's own
// user, in an earlier run with synth-user none) or a copy of the cache made elsewhere has no
// such record. The records themselves must be writable by their owner alone, who must not be
// a synthesis user: those users cannot write the cache at all, so a record in it was written
// by cdkbot (or whoever ran it), for content it synthesized in a sandbox or for its own user.
func distrust(cache, entry string, users map[string]*synth.Identity) string {
	root, err := os.OpenRoot(filepath.Join(cache, digests))
	if err != nil {
		return "cdkbot has no record of caching it"
	}
	defer root.Close()
	dir, err := root.Lstat(".")
	if err != nil {
		return "cdkbot has no record of caching it"
	}
	if why := writableByOthers(dir, users); why != "" {
		return "the cache's records (" + filepath.Join(cache, digests) + ") " + why
	}
	f, err := root.Open(filepath.Base(entry))
	if err != nil {
		return "cdkbot has no record of caching it"
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "cdkbot has no record of caching it"
	}
	if why := writableByOthers(fi, users); why != "" {
		return "its record " + why
	}
	want, err := io.ReadAll(io.LimitReader(f, 256))
	if err != nil {
		return "its record cannot be read: " + err.Error()
	}
	got, err := synth.Fingerprint(entry)
	if err != nil {
		return err.Error()
	}
	if strings.TrimSpace(string(want)) != got {
		return "it is not what cdkbot cached (its fingerprint is not the one recorded): something else wrote it"
	}
	return ""
}

// writableByOthers says why a file of the cache's records may have been written by someone
// other than its owner, or by a synthesis user ("" when neither, and where files have no POSIX
// owner: Windows, which has no synthesis users).
func writableByOthers(fi fs.FileInfo, users map[string]*synth.Identity) string {
	owner, ok := synth.OwnerOf(fi)
	if !ok {
		return ""
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("can be written by others (mode %04o)", fi.Mode().Perm())
	}
	for _, u := range users {
		if u.UID == owner {
			return fmt.Sprintf("belongs to a synthesis user (uid %d)", owner)
		}
	}
	return ""
}

// cacheRoot is where cdkbot keeps what it may reuse (assemblies by inputs, dependencies by lock
// file), "" when the machine gives no cache directory.
func cacheRoot() string {
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "cdkbot")
	}
	return ""
}

// nodeModulesCache is where installed dependencies are kept by lock file, "" without a cache.
func nodeModulesCache(cache string) string {
	if cache != "" {
		return filepath.Join(cache, "node_modules")
	}
	return ""
}

func firstLine(err error) string {
	var se *synth.Error
	if errors.As(err, &se) {
		return se.Summary()
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// privateGitConfig makes the repository's .git/config readable by its owner alone before pull
// request code runs: actions/checkout keeps the workflow's token there (an http extraheader)
// unless persist-credentials is false, and the file is world-readable.
func privateGitConfig(root string, log io.Writer) error {
	path := filepath.Join(root, ".git", "config")
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
		return nil // no such file (a worktree, a bare copy), or already private
	}
	if err := os.Chmod(path, fi.Mode().Perm()&^0o077); err != nil {
		return fmt.Errorf("make %s private before running pull request code: %w", path, err)
	}
	if log != nil {
		fmt.Fprintf(log, "cdkbot: made %s private "+
			"(it may hold the checkout's token; check out with persist-credentials: false)\n", path)
	}
	return nil
}
