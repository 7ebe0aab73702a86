// Package gitrepo is cdkbot's access to git (go-git, no git binary): open the repository, resolve
// the base and head of a change, find their merge base, and materialize a revision's files
// into a directory of their own without touching the user's working tree.
package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Repo is an opened repository.
type Repo struct {
	repo *git.Repository
	root string
}

// openOptions find the repository from anywhere inside it, and read a linked worktree's refs and
// objects from the repository it belongs to (its .git is a file naming a directory that holds
// only HEAD and the index; "commondir" there leads to the rest).
var openOptions = &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true}

// Open opens the repository that contains dir: a clone, or a worktree made by git worktree add.
func Open(dir string) (*Repo, error) {
	r, err := git.PlainOpenWithOptions(dir, openOptions)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fmt.Errorf("%s is not in a git repository: run inside one, or name it with --repo DIR", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", dir, err)
	}
	wt, err := r.Worktree()
	root := dir
	if err == nil {
		root = wt.Filesystem.Root()
	}
	return &Repo{repo: r, root: root}, nil
}

// Root is the top directory of the working tree.
func (r *Repo) Root() string { return r.root }

// Resolve turns a revision (sha, branch, tag, HEAD~1, …) into a commit hash.
func (r *Repo) Resolve(rev string) (string, error) {
	h, err := r.repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		hint := ""
		if r.Shallow() {
			hint = " (this is a shallow clone: fetch more history, e.g. actions/checkout with fetch-depth: 0)"
		} else if branches := r.branchNames(5); len(branches) > 0 {
			hint = " (branches here: " + strings.Join(branches, ", ") + ")"
		}
		return "", fmt.Errorf("resolve %q: %w%s", rev, err, hint)
	}
	return h.String(), nil
}

// Shallow reports whether the clone lacks history (GitHub's checkout defaults to depth 1).
func (r *Repo) Shallow() bool {
	s, err := r.repo.Storer.Shallow()
	return err == nil && len(s) > 0
}

// MergeBase is the best common ancestor of two revisions.
func (r *Repo) MergeBase(a, b string) (string, error) {
	ca, err := r.commit(a)
	if err != nil {
		return "", err
	}
	cb, err := r.commit(b)
	if err != nil {
		return "", err
	}
	bases, err := ca.MergeBase(cb)
	if err != nil {
		return "", fmt.Errorf("merge base of %s and %s: %w", a, b, err)
	}
	if len(bases) == 0 {
		return "", fmt.Errorf("%s and %s have no common history", a, b)
	}
	return bases[0].Hash.String(), nil
}

// Parents returns the commit a revision names and its parents' hashes, first parent first (a
// merge commit has two). A shallow clone knows the parents' hashes even without their objects.
func (r *Repo) Parents(rev string) (string, []string, error) {
	c, err := r.commit(rev)
	if err != nil {
		return "", nil, err
	}
	var out []string
	for _, p := range c.ParentHashes {
		out = append(out, p.String())
	}
	return c.Hash.String(), out, nil
}

// DefaultBranch names the remote's default branch (origin/HEAD), else main or master.
func (r *Repo) DefaultBranch() string {
	if ref, err := r.repo.Reference(plumbing.NewRemoteHEADReferenceName("origin"), false); err == nil &&
		ref.Type() == plumbing.SymbolicReference {
		return strings.TrimPrefix(ref.Target().String(), "refs/remotes/")
	}
	for _, b := range []string{"origin/main", "origin/master", "main", "master"} {
		if _, err := r.repo.ResolveRevision(plumbing.Revision(b)); err == nil {
			return b
		}
	}
	return "main"
}

func (r *Repo) commit(rev string) (*object.Commit, error) {
	h, err := r.Resolve(rev)
	if err != nil {
		return nil, err
	}
	c, err := r.repo.CommitObject(plumbing.NewHash(h))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", rev, err)
	}
	return c, nil
}

// tree is the root tree of revision rev.
func (r *Repo) tree(rev string) (*object.Tree, error) {
	c, err := r.commit(rev)
	if err != nil {
		return nil, err
	}
	return c.Tree()
}

// cleanPath makes a slash-separated repository path canonical and relative: "" is the root, and
// ".." cannot climb above it.
func cleanPath(p string) string { return strings.Trim(path.Clean("/"+p), "/") }

// ErrNoSuchPath means the revision does not contain the requested directory.
var ErrNoSuchPath = errors.New("no such directory in the revision")

// Materialize writes the files under dir (slash-separated, "" for all) at revision rev into
// dst, which must exist and be empty. Paths are checked so that a crafted tree cannot write
// outside dst; symlinks are recreated as symlinks.
func (r *Repo) Materialize(rev, dir, dst string) error {
	tree, err := r.tree(rev)
	if err != nil {
		return err
	}
	if dir = cleanPath(dir); dir != "" {
		if tree, err = tree.Tree(dir); err != nil {
			return fmt.Errorf("%s at %s: %w", dir, rev, ErrNoSuchPath)
		}
	}
	return writeTree(tree, dst, dir, rev)
}

// writeTree writes the files of tree into dst (what names them is for messages).
func writeTree(tree *object.Tree, dst, dir, rev string) error {
	return tree.Files().ForEach(func(f *object.File) error {
		if path.IsAbs(f.Name) || strings.Contains("/"+f.Name+"/", "/../") {
			return fmt.Errorf("%s at %s: unsafe path %q in the tree", dir, rev, f.Name)
		}
		return writeFile(f, filepath.Join(dst, filepath.FromSlash(f.Name)))
	})
}

// writeFile writes one file of a tree at target; symlinks are recreated as symlinks.
func writeFile(f *object.File, target string) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	rd, err := f.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	if f.Mode == filemode.Symlink {
		link, err := io.ReadAll(rd)
		if err != nil {
			return err
		}
		return os.Symlink(string(link), target)
	}
	perm := os.FileMode(0o644)
	if f.Mode == filemode.Executable {
		perm = 0o755
	}
	out, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, rd); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// RefusedError is a file of a revision that cdkbot will not read, and why.
type RefusedError struct {
	Rev, Name string // the revision as the caller named it; the file's path in it
	Why       string // "is a symbolic link"
	Fix       string // what to do
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s at %s %s: %s", e.Name, e.Rev, e.Why, e.Fix)
}

// ReadFile reads the file at name (slash-separated, from the repository's top) in revision rev,
// as package checkout reads a checkout's: a regular file (not a symbolic link, which in a
// revision leads wherever its author chose, nor a directory or a submodule) of at most limit
// bytes, its size checked before its contents are read. A file rev lacks is an error matching
// fs.ErrNotExist; a file cdkbot will not read is a *RefusedError.
func (r *Repo) ReadFile(rev, name string, limit int64) ([]byte, error) {
	tree, err := r.tree(rev)
	if err != nil {
		return nil, err
	}
	name = cleanPath(name)
	missing := fmt.Errorf("%s at %s: %w", name, rev, fs.ErrNotExist)
	if name == "" {
		return nil, &RefusedError{Rev: rev, Name: "/", Why: "is a directory", Fix: "name a file"}
	}
	parts := strings.Split(name, "/")
	var entry *object.TreeEntry
	for i, part := range parts {
		at := strings.Join(parts[:i+1], "/")
		if entry, err = tree.FindEntry(part); err != nil {
			return nil, missing
		}
		switch {
		case entry.Mode == filemode.Symlink:
			return nil, &RefusedError{Rev: rev, Name: at, Why: "is a symbolic link",
				Fix: "cdkbot reads a revision's files only as committed, never through a link; commit the file itself"}
		case i == len(parts)-1:
		case entry.Mode != filemode.Dir:
			return nil, missing
		default:
			if tree, err = r.repo.TreeObject(entry.Hash); err != nil {
				return nil, fmt.Errorf("%s at %s: %w", at, rev, err)
			}
		}
	}
	if entry.Mode != filemode.Regular && entry.Mode != filemode.Executable && entry.Mode != filemode.Deprecated {
		what := "a submodule"
		if entry.Mode == filemode.Dir {
			what = "a directory"
		}
		return nil, &RefusedError{Rev: rev, Name: name, Why: "is " + what + ", not a regular file",
			Fix: "cdkbot reads only regular files; commit the file itself"}
	}
	size, err := r.repo.Storer.EncodedObjectSize(entry.Hash)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", name, rev, err)
	}
	if size > limit {
		return nil, &RefusedError{Rev: rev, Name: name,
			Why: fmt.Sprintf("is %d bytes, over cdkbot's limit of %d bytes for this file", size, limit),
			Fix: "a file this large is not one a CDK project commits; check what was committed under this name"}
	}
	blob, err := r.repo.BlobObject(entry.Hash)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", name, rev, err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", name, rev, err)
	}
	defer rd.Close()
	raw, err := io.ReadAll(io.LimitReader(rd, limit+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s at %s: %w", name, rev, err)
	case int64(len(raw)) > limit:
		return nil, &RefusedError{Rev: rev, Name: name, Why: fmt.Sprintf("is over cdkbot's limit of %d bytes", limit),
			Fix: "a file this large is not one a CDK project commits; check what was committed under this name"}
	}
	return raw, nil
}

// ObjectIDs returns the git object id of the tree or file at each of paths (slash-separated,
// "" for the root) in rev, "" where rev has nothing. Equal ids mean equal contents, whatever
// else the commits changed: they key what a synthesis reads.
func (r *Repo) ObjectIDs(rev string, paths []string) ([]string, error) {
	tree, err := r.tree(rev)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		if p = cleanPath(p); p == "" {
			out[i] = tree.Hash.String()
		} else if e, err := tree.FindEntry(p); err == nil {
			out[i] = e.Hash.String()
		}
	}
	return out, nil
}

// MaterializePaths writes the trees and files at paths (slash-separated; those rev lacks are
// skipped) into dst, each at its own path under dst, as Materialize does for one directory.
func (r *Repo) MaterializePaths(rev string, paths []string, dst string) error {
	root, err := r.tree(rev)
	if err != nil {
		return err
	}
	var written []string // directories written whole: paths under them are already there
	clean := make([]string, 0, len(paths))
	for _, p := range paths {
		clean = append(clean, cleanPath(p))
	}
	slices.Sort(clean)
	for _, p := range slices.Compact(clean) {
		if slices.ContainsFunc(written, func(d string) bool { return d == "" || strings.HasPrefix(p, d+"/") }) {
			continue
		}
		if p == "" {
			if err := writeTree(root, dst, p, rev); err != nil {
				return err
			}
			written = append(written, p)
			continue
		}
		at := filepath.Join(dst, filepath.FromSlash(p))
		if t, err := root.Tree(p); err == nil {
			if err := writeTree(t, at, p, rev); err != nil {
				return err
			}
			written = append(written, p)
			continue
		}
		if f, err := root.File(p); err == nil {
			if err := writeFile(f, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// Init creates a repository in dir (the demo and tests build throwaway repositories).
func Init(dir string) (*Repo, error) {
	// main, as git init and GitHub name the default branch today (and the README's examples).
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	if err != nil {
		return nil, fmt.Errorf("init git repository at %s: %w", dir, err)
	}
	return &Repo{repo: r, root: dir}, nil
}

// CommitAll stages every file of the working tree and commits it, returning the commit hash.
func (r *Repo) CommitAll(message string, author object.Signature) (string, error) {
	wt, err := r.repo.Worktree()
	if err != nil {
		return "", err
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return "", fmt.Errorf("stage files: %w", err)
	}
	h, err := wt.Commit(message, &git.CommitOptions{Author: &author, Committer: &author, AllowEmptyCommits: true})
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	return h.String(), nil
}

// Deepen fetches the history a shallow clone lacks, with the git binary, which has the
// credentials actions/checkout configured. It says what to do when it cannot.
func (r *Repo) Deepen() error {
	cmd := exec.Command("git", "-C", r.root, "fetch", "--no-tags", "--unshallow", "origin")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("this is a shallow clone and fetching its history failed (%v: %s); check out with fetch-depth: 0",
			err, strings.TrimSpace(string(out)))
	}
	// go-git caches the shallow list; reopen.
	repo, err := git.PlainOpenWithOptions(r.root, openOptions)
	if err != nil {
		return err
	}
	r.repo = repo
	return nil
}

// MaxFiles bounds the files Files lists at a revision: a repository of pull request code can be
// anything, and a listing past this is refused rather than cut (a file past the cut, an app's
// cdk.json, would go unseen).
const MaxFiles = 2_000_000

// ErrTooManyFiles means a revision holds more files than Files lists.
var ErrTooManyFiles = errors.New("cdkbot does not list them all")

// Files lists the regular files of revision rev (slash-separated paths from the repository's
// top; no symbolic links, no submodules) from its git tree, without reading any of them.
func (r *Repo) Files(rev string) ([]string, error) {
	return r.files(rev, MaxFiles)
}

func (r *Repo) files(rev string, limit int) ([]string, error) {
	tree, err := r.tree(rev)
	if err != nil {
		return nil, err
	}
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	var out []string
	for {
		name, e, err := w.Next()
		switch {
		case errors.Is(err, io.EOF):
			return out, nil
		case err != nil:
			return nil, fmt.Errorf("list the files of %s: %w", rev, err)
		case len(out) >= limit:
			return nil, fmt.Errorf("%s holds more than %d files: %w", rev, limit, ErrTooManyFiles)
		}
		if e.Mode == filemode.Regular || e.Mode == filemode.Executable {
			out = append(out, name)
		}
	}
}

// branchNames are up to n local branch names, sorted, for an error that names what there is.
func (r *Repo) branchNames(n int) []string {
	refs, err := r.repo.Branches()
	if err != nil {
		return nil
	}
	var names []string
	_ = refs.ForEach(func(ref *plumbing.Reference) error {
		names = append(names, ref.Name().Short())
		return nil
	})
	slices.Sort(names)
	if len(names) > n {
		names = append(names[:n], "…")
	}
	return names
}
