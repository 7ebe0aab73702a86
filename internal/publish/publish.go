package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// FileStore is what publishing needs from an S3 destination; the S3 adapter implements it and
// tests may substitute it.
type FileStore interface {
	// Exists reports whether the object is already published.
	Exists(ctx context.Context, bucket, key string) (bool, error)
	// Upload writes the object atomically (on failure nothing becomes visible), streaming body
	// from disk: seekable, so retries and signing re-read it instead of buffering it.
	Upload(ctx context.Context, bucket, key string, body io.ReadSeeker, size int64, contentType string) error
}

// LeftoverAborter is a FileStore that can abort the unfinished multipart uploads of a key that
// an earlier, killed run left behind (billed storage nobody sees), saying how many it aborted.
type LeftoverAborter interface {
	AbortLeftovers(ctx context.Context, bucket, key string) (int, error)
}

// FileStores opens the store of a destination, acting as its publishing role.
type FileStores func(ctx context.Context, d publishplan.Destination) (FileStore, error)

// Aliases of the outcome vocabulary, which lives with the plan so views can render it.
type (
	State   = publishplan.State
	Outcome = publishplan.Outcome
	Summary = publishplan.Summary
)

// States, re-exported for callers of this package.
const (
	Checking  = publishplan.Checking
	Present   = publishplan.Present
	Missing   = publishplan.Missing
	Packaging = publishplan.Packaging
	Uploading = publishplan.Uploading
	Published = publishplan.Published
	Failed    = publishplan.Failed
	Skipped   = publishplan.Skipped
)

// Event reports progress of one asset at one destination; it lives with the plan's states,
// so views can hear it without the adapter.
type Event = publishplan.Event

// Options tune a run.
type Options struct {
	// Root is the assembly directory the plan's source paths are relative to.
	Root string
	// Files opens S3 destinations.
	Files FileStores
	// Images opens ECR destinations; Docker builds, tags and pushes. Both are needed only when
	// the plan has image assets.
	Images ImageStores
	Docker Docker
	// DockerConcurrency bounds image builds at once (they are heavy); zero means 1, as the
	// CDK CLI does by default.
	DockerConcurrency int
	// Concurrency bounds assets processed at once; zero means 8.
	Concurrency int
	// DryRun checks what is present and uploads nothing.
	DryRun bool
	// Progress, when set, receives every event (serialized; it need not lock).
	Progress func(Event)
	// TempDir holds zips while they upload; empty means the system's.
	TempDir string
	// AllowExecutables runs the commands of assets built by an executable (code from the app,
	// so only for trusted revisions); otherwise such assets are refused up front.
	AllowExecutables bool
}

// RefusedError is a plan refused before anything was published: bad input, not an outage.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Executables lists the jobs of p built by running a command from the assembly, which a run
// refuses up front unless allowed, rather than stop half way.
func Executables(p *publishplan.Plan) []string {
	var out []string
	for _, j := range p.Jobs {
		if executable(j) != nil {
			out = append(out, fmt.Sprintf("%s (%s): built by running %q", j.ID, j.Manifest, strings.Join(executable(j), " ")))
		}
	}
	return out
}

func executable(j publishplan.Job) []string {
	if j.Image != nil && len(j.Image.Executable) > 0 {
		return j.Image.Executable
	}
	return j.Executable
}

// Run publishes every job of p that is not already present. Assets run concurrently; the first
// failure cancels the rest (uploads in flight are aborted, not left half-written) and is
// returned, the summary recording every asset × destination.
func Run(ctx context.Context, p *publishplan.Plan, o Options) (Summary, error) {
	if err := Check(p, o); err != nil {
		return Summary{}, err
	}
	n := o.Concurrency
	if n <= 0 {
		n = 8
	}
	builds := o.DockerConcurrency
	if builds <= 0 {
		builds = 1
	}
	r := &run{
		o: o, outcomes: make([][]Outcome, len(p.Jobs)), builds: make(chan struct{}, builds), logins: map[string]bool{},
	}
	for i, j := range p.Jobs {
		for _, d := range j.Destinations {
			store, target := "s3://"+d.Bucket, "s3://"+d.Bucket+"/"+d.Key
			if j.Kind == publishplan.Image {
				store, target = d.Repository, d.Repository+":"+d.Tag
			}
			r.outcomes[i] = append(r.outcomes[i], Outcome{Asset: j.ID, Manifest: j.Manifest, Destination: d.ID,
				Target: target, Store: store, State: Skipped})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	for i := range p.Jobs {
		if gctx.Err() != nil {
			break
		}
		if p.Jobs[i].Kind == publishplan.Image {
			g.Go(func() error { return r.image(gctx, i, p.Jobs[i]) })
			continue
		}
		g.Go(func() error { return r.file(gctx, i, p.Jobs[i]) })
	}
	err := g.Wait()
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("publishing stopped before every asset was published: %w", ctx.Err())
	}
	var s Summary
	for _, per := range r.outcomes {
		s.Outcomes = append(s.Outcomes, per...)
	}
	return s, err
}

// Check refuses a plan that cannot be published as a whole, before anything is uploaded:
// assets built by executables (unless allowed), image assets without a publisher, and source
// paths that are missing or lead outside the assembly. Run checks first; a caller that
// publishes a plan in parts checks the whole plan once up front.
func Check(p *publishplan.Plan, o Options) error {
	if bad := Executables(p); len(bad) > 0 && !o.AllowExecutables {
		return &RefusedError{fmt.Errorf("these assets are built by running code from the assembly:\n  %s\n"+
			"allow it for trusted revisions only (--allow-executables), or select the other assets by id",
			strings.Join(bad, "\n  "))}
	}
	// Every source is checked before anything is uploaded, so a hostile path stops the run
	// with nothing published.
	for _, j := range p.Jobs {
		src := j.SourcePath
		if j.Kind == publishplan.Image && (o.Images == nil || o.Docker == nil) {
			return &RefusedError{fmt.Errorf("asset %s (%s) is a docker image: no image publisher configured", j.ID, j.Manifest)}
		}
		if executable(j) != nil {
			continue // no source on disk: the command makes it
		}
		if j.Kind == publishplan.Image {
			src = j.Image.ResolvedDirectory
			if out := diskOutput(j.Image.DockerOutputs); out != "" {
				return &RefusedError{fmt.Errorf("asset %s (%s): its build writes to the disk (--output %s), where it "+
					"could rewrite what was reviewed before it is published: publish images to a registry only",
					j.ID, j.Manifest, out)}
			}
		}
		if _, err := Source(o.Root, src); err != nil {
			return &RefusedError{fmt.Errorf("asset %s (%s): %w", j.ID, j.Manifest, err)}
		}
	}
	return nil
}

// diskOutput is the first docker build output that writes files (a local directory, a tar, an
// OCI layout), "" when every output goes to a registry or the image store.
func diskOutput(outputs []string) string {
	for _, o := range outputs {
		for _, part := range strings.Split(o, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch {
			case k == "dest", k == "type" && (v == "local" || v == "tar" || v == "oci"):
				return o
			case k != "type" && !strings.Contains(part, "="): // the short form "--output ./dir"
				return o
			}
		}
	}
	return ""
}

type run struct {
	o        Options
	mu       sync.Mutex
	outcomes [][]Outcome
	builds   chan struct{} // docker build slots

	loginMu sync.Mutex
	logins  map[string]bool // registries logged in to
}

func (r *run) emit(e Event) {
	if r.o.Progress == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.o.Progress(e)
}

func (r *run) set(i, k int, st State, bytes int64, err error) {
	r.mu.Lock()
	oc := &r.outcomes[i][k]
	oc.State, oc.Bytes = st, bytes
	if err != nil {
		oc.Error = err.Error()
	}
	r.mu.Unlock()
	r.emit(Event{Asset: oc.Asset, Destination: oc.Destination, State: st, Bytes: bytes, Err: err})
}

// note keeps a remark on an outcome for the summary.
func (r *run) note(i, k int, text string) {
	r.mu.Lock()
	r.outcomes[i][k].Note = text
	r.mu.Unlock()
}

// fail records a failure, or a skip when the run was already stopping: an asset cut short
// by another's failure did not fail on its own.
func (r *run) fail(ctx context.Context, i, k int, err error) {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		r.set(i, k, Skipped, 0, errors.New("not finished: the run stopped at an earlier failure"))
		return
	}
	r.set(i, k, Failed, 0, err)
}

// check asks every destination of job i whether it already holds the asset and returns those
// that lack it; a dry run reports them missing and returns none.
func (r *run) check(
	ctx context.Context, i int, j publishplan.Job, exists func(k int, d publishplan.Destination) (bool, error),
) ([]int, error) {
	var missing []int
	for k, d := range j.Destinations {
		r.set(i, k, Checking, 0, nil)
		ok, err := exists(k, d)
		switch {
		case err != nil:
			err = fmt.Errorf("asset %s → %s: %w", j.ID, describe(d), err)
			r.fail(ctx, i, k, err)
			return nil, err
		case ok:
			r.set(i, k, Present, 0, nil)
		case r.o.DryRun:
			r.set(i, k, Missing, 0, nil)
		default:
			missing = append(missing, k)
		}
	}
	return missing, nil
}

// file publishes one file asset: check every destination, package once if any lacks it, upload.
func (r *run) file(ctx context.Context, i int, j publishplan.Job) error {
	if ctx.Err() != nil {
		return nil // stopped before this asset began: it stays skipped
	}
	stores := make([]FileStore, len(j.Destinations))
	missing, err := r.check(ctx, i, j, func(k int, d publishplan.Destination) (bool, error) {
		st, err := r.o.Files(ctx, d)
		if err != nil {
			return false, err
		}
		stores[k] = st
		return st.Exists(ctx, d.Bucket, d.Key)
	})
	if err != nil || len(missing) == 0 {
		return err
	}
	body, size, contentType, cleanup, err := r.pack(ctx, j)
	if err != nil {
		err = fmt.Errorf("asset %s (%s): %w", j.ID, j.SourcePath, err)
		for _, k := range missing {
			r.fail(ctx, i, k, err)
		}
		return err
	}
	defer cleanup()
	for _, k := range missing {
		d := j.Destinations[k]
		if _, err := body.Seek(0, io.SeekStart); err != nil {
			return err
		}
		r.set(i, k, Uploading, size, nil)
		counted := &progressReader{ReadSeeker: body, report: func(sent int64) {
			r.emit(Event{Asset: j.ID, Destination: d.ID, State: Uploading, Bytes: size, Sent: sent})
		}}
		if la, ok := stores[k].(LeftoverAborter); ok {
			switch n, err := la.AbortLeftovers(ctx, d.Bucket, d.Key); {
			case err != nil:
				r.note(i, k, fmt.Sprintf("unfinished uploads an earlier run may have left were not aborted: %v", err))
			case n > 0:
				r.note(i, k, fmt.Sprintf("aborted %d unfinished upload(s) an earlier run left", n))
			}
		}
		if err := stores[k].Upload(ctx, d.Bucket, d.Key, counted, size, contentType); err != nil {
			err = fmt.Errorf("asset %s → %s: upload: %w", j.ID, describe(d), err)
			r.fail(ctx, i, k, err)
			return err
		}
		r.set(i, k, Published, size, nil)
	}
	return nil
}

// progressReader reports how far an upload has read its body, at most once per MiB. A body
// may be read more than once (signing over plain HTTP, retries): the position is reported,
// so progress restarts with the pass.
type progressReader struct {
	io.ReadSeeker
	pos, last int64
	report    func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.ReadSeeker.Read(b)
	p.pos += int64(n)
	if p.pos-p.last >= 1<<20 || (err == io.EOF && p.pos != p.last) {
		p.last = p.pos
		p.report(p.pos)
	}
	return n, err
}

func (p *progressReader) Seek(offset int64, whence int) (int64, error) {
	pos, err := p.ReadSeeker.Seek(offset, whence)
	if err == nil {
		p.pos, p.last = pos, pos
	}
	return pos, err
}

// pack opens the bytes to upload: the file itself, or a deterministic zip of the directory in
// a temporary file (streamed there, so memory stays flat whatever the asset's size).
func (r *run) pack(ctx context.Context, j publishplan.Job) (io.ReadSeeker, int64, string, func(), error) {
	if argv := executable(j); argv != nil {
		// As cdk-assets: the command runs in the assembly and prints the path of the archive to upload.
		r.emit(Event{Asset: j.ID, State: Packaging})
		out, err := runExecutable(ctx, r.o.Root, argv)
		if err != nil {
			return nil, 0, "", nil, err
		}
		path := out
		if !filepath.IsAbs(path) {
			path = filepath.Join(r.o.Root, path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, 0, "", nil, fmt.Errorf("%q printed %q, which is not a readable file: %w",
				strings.Join(argv, " "), out, err)
		}
		info, err := f.Stat()
		if err != nil || !info.Mode().IsRegular() {
			f.Close()
			return nil, 0, "", nil, fmt.Errorf("%q printed %q, which is not a regular file", strings.Join(argv, " "), out)
		}
		return f, info.Size(), "application/zip", func() { f.Close() }, nil
	}
	src, err := Source(r.o.Root, j.SourcePath)
	if err != nil {
		return nil, 0, "", nil, err
	}
	info, err := os.Stat(src)
	if err != nil {
		return nil, 0, "", nil, err
	}
	switch j.Packaging {
	case "file", "":
		if info.IsDir() {
			return nil, 0, "", nil, errors.New("packaging is file but the source is a directory")
		}
		f, err := os.Open(src)
		if err != nil {
			return nil, 0, "", nil, err
		}
		return f, info.Size(), contentTypeOf(j.SourcePath), func() { f.Close() }, nil
	case "zip":
		if !info.IsDir() {
			// A single file with zip packaging is uploaded as is: it already is the archive.
			f, err := os.Open(src)
			if err != nil {
				return nil, 0, "", nil, err
			}
			return f, info.Size(), "application/zip", func() { f.Close() }, nil
		}
		r.emit(Event{Asset: j.ID, State: Packaging})
		f, err := os.CreateTemp(r.o.TempDir, "cdkbot-asset-*.zip")
		if err != nil {
			return nil, 0, "", nil, err
		}
		cleanup := func() { f.Close(); os.Remove(f.Name()) }
		if _, err := Zip(f, r.o.Root, src); err != nil {
			cleanup()
			return nil, 0, "", nil, err
		}
		size, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			cleanup()
			return nil, 0, "", nil, err
		}
		return f, size, "application/zip", cleanup, nil
	default:
		return nil, 0, "", nil, fmt.Errorf("unknown packaging %q (expected file or zip)", j.Packaging)
	}
}

// runExecutable runs an asset's command in the assembly directory and returns the last line
// it printed; its stderr is kept for the error.
func runExecutable(ctx context.Context, dir string, argv []string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%q failed: %w\n%s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return "", fmt.Errorf("%q printed nothing: it must print the path (files) or tag (images) it built",
			strings.Join(argv, " "))
	}
	return last, nil
}

// Source resolves an asset's root-relative source path, refusing absolute paths, paths that
// climb out of the assembly and symlinks that lead out of it.
func Source(root, rel string) (string, error) {
	if rel == "" {
		return "", errors.New("asset has no source path")
	}
	slash := filepath.ToSlash(rel)
	if filepath.IsAbs(rel) || path.IsAbs(slash) {
		return "", fmt.Errorf("source path %q is absolute: assets must be inside the assembly", rel)
	}
	if clean := path.Clean(slash); clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("source path %q leaves the assembly", rel)
	}
	rootAbs, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(rootAbs, filepath.FromSlash(slash)))
	if err != nil {
		return "", fmt.Errorf("source path %q: %w", rel, err)
	}
	if real != rootAbs && !strings.HasPrefix(real, rootAbs+string(filepath.Separator)) {
		return "", fmt.Errorf("source path %q is a symbolic link to %s, outside the assembly", rel, real)
	}
	return real, nil
}

func contentTypeOf(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func describe(d publishplan.Destination) string {
	s := "s3://" + d.Bucket + "/" + d.Key
	if d.Repository != "" {
		s = d.Repository + ":" + d.Tag
	}
	if d.Region != "" {
		s += " (" + d.Region + ")"
	}
	if d.AssumeRoleARN != "" {
		s += " as " + d.AssumeRoleARN
	}
	return s
}
