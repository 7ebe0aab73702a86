package synth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The dependency cache keeps everything an install wrote that the app needs: the node_modules
// of the app and those its install scripts made below it (a `postinstall` that installs
// lambdas/ leaves lambdas/node_modules), each under its relative place in one cache entry:
// <CacheDir>/<key>/node_modules, <CacheDir>/<key>/lambdas/node_modules. A synthesis from the
// cache gets a link to each of them at the same place in its checkout.

// maxModulesDepth bounds how deep below the app node_modules and lock files are looked for: a
// checkout (pull-request code) can be arbitrarily deep.
const maxModulesDepth = 6

// nodeLockFiles are the lock files that decide the content of a node_modules directory.
func nodeLockFiles() map[string]bool {
	names := map[string]bool{}
	for _, tc := range toolchains {
		if tc.nodeLock {
			for _, m := range tc.markers {
				names[m] = true
			}
		}
	}
	return names
}

// walkApp visits the directories below root, at most maxModulesDepth deep, without following
// links and without entering .git, skip, or node_modules (whose own node_modules belong to it);
// visit is called for every entry but root, with its slash-separated path relative to root.
func walkApp(root, skip string, visit func(rel string, d fs.DirEntry)) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil // an unreadable corner of the tree holds nothing cdkbot caches
		}
		if path == root {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		visit(rel, d)
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || path == skip ||
			depth(rel) >= maxModulesDepth) {
			return filepath.SkipDir
		}
		return nil
	})
}

func depth(rel string) int { return strings.Count(rel, "/") + 1 }

// subLockFiles are the lock files of packages below the app (lambdas/package-lock.json), in a
// stable order: an install script may install them, so they decide the cache entry too.
func (o Options) subLockFiles() ([]string, error) {
	names := nodeLockFiles()
	var locks []string
	err := walkApp(o.Dir, o.OutDir, func(rel string, d fs.DirEntry) {
		if names[d.Name()] && !d.IsDir() && filepath.Dir(filepath.FromSlash(rel)) != "." {
			locks = append(locks, rel)
		}
	})
	sort.Strings(locks)
	return locks, err
}

// modulesDirs are the node_modules directories below root (relative, slash-separated), not
// counting links: what an install wrote. complete is false when a node_modules is not a plain
// directory (a link the install made could lead anywhere; such a result is not cached).
func modulesDirs(root, skip string) (dirs []string, complete bool, err error) {
	complete = true
	err = walkApp(root, skip, func(rel string, d fs.DirEntry) {
		switch {
		case d.Name() != "node_modules":
		case d.IsDir():
			dirs = append(dirs, rel)
		default:
			complete = false
		}
	})
	sort.Strings(dirs)
	return dirs, complete, err
}

// fromCache links each node_modules of the cache entry into the app's directory, at its place.
func (o Options) fromCache(entry string) error {
	dirs, _, err := modulesDirs(entry, "")
	if err != nil {
		return err
	}
	for _, rel := range dirs {
		parent, err := dirIn(o.Dir, filepath.Dir(filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		cached := filepath.Join(entry, filepath.FromSlash(rel))
		if err := os.Symlink(cached, filepath.Join(parent, "node_modules")); err != nil {
			return err
		}
	}
	return nil
}

// dirIn is the directory rel below root, made when missing. No part of it may be a link: the
// checkout is pull-request code, and a link there (lambdas -> /etc) would make cdkbot, often
// root, write where the app's author chose.
func dirIn(root, rel string) (string, error) {
	dir := root
	if rel == "." {
		return dir, nil
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(dir, 0o755); err != nil {
				return "", err
			}
		case err != nil:
			return "", err
		case !fi.IsDir():
			return "", fmt.Errorf("%s: not a directory (a link?): cdkbot puts cached dependencies only in "+
				"the app's own directories", dir)
		}
	}
	return dir, nil
}

// toCache moves the node_modules directories the install wrote below the app into the cache
// entry and links them back. They are gathered beside the entry first, so the entry appears
// whole or not at all, and given to cdkbot before the app runs: the synthesis user reads them
// but cannot plant code in what another revision (perhaps the base) will run. cached is false
// when the install's result stays where it is, uncached.
func (o Options) toCache(entry string) (cached bool, err error) {
	// An install that needs no modules leaves none; cache that result too.
	if _, err := os.Lstat(filepath.Join(o.Dir, "node_modules")); errors.Is(err, fs.ErrNotExist) {
		_ = os.Mkdir(filepath.Join(o.Dir, "node_modules"), 0o755)
	}
	dirs, complete, err := modulesDirs(o.Dir, o.OutDir)
	if err != nil || !complete || len(dirs) == 0 || os.MkdirAll(filepath.Dir(entry), 0o755) != nil {
		return false, nil
	}
	stage, err := os.MkdirTemp(filepath.Dir(entry), filepath.Base(entry)+".tmp-")
	if err != nil {
		return false, nil
	}
	moved := 0
	undo := func() {
		for _, rel := range dirs[:moved] {
			_ = os.Rename(filepath.Join(stage, filepath.FromSlash(rel)), filepath.Join(o.Dir, filepath.FromSlash(rel)))
		}
		_ = os.RemoveAll(stage)
	}
	if os.Chmod(stage, 0o755) != nil {
		undo()
		return false, nil
	}
	for _, rel := range dirs {
		to := filepath.Join(stage, filepath.FromSlash(rel))
		from := filepath.Join(o.Dir, filepath.FromSlash(rel))
		if os.MkdirAll(filepath.Dir(to), 0o755) != nil || os.Rename(from, to) != nil {
			undo() // another file system, say: the install's result stays in the checkout
			return false, nil
		}
		moved++
	}
	if o.User != nil {
		err := reclaim(stage)
		if err == nil {
			err = unwritable(stage)
		}
		if err != nil {
			_ = os.RemoveAll(stage)
			return false, err
		}
	}
	if err := os.Rename(stage, entry); err != nil {
		// Another synthesis of the same lock files cached them first: theirs is as good.
		_ = os.RemoveAll(stage)
		if _, statErr := os.Stat(entry); statErr != nil {
			return false, err
		}
	}
	return true, o.fromCache(entry)
}

// unwritable takes write permission for group and others off a tree, without following links:
// an install may leave its files writable by all (chmod -R 777), and owning them is then not
// enough to keep the synthesis user out.
func unwritable(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		fi, err := d.Info()
		if err != nil || fi.Mode().Perm()&0o022 == 0 {
			return err
		}
		return os.Chmod(path, fi.Mode().Perm()&^0o022)
	})
}
