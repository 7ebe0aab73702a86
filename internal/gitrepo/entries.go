package gitrepo

import (
	"fmt"
	"path"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// MaxEntries bounds what Entries lists: a repository of more files than this is not an app
// directory a synthesis key should enumerate.
const MaxEntries = 500_000

// Entry is a file, link or submodule in a tree of a revision.
type Entry struct {
	Path string // slash-separated, relative to the directory listed
	ID   string // git object id: equal ids, equal contents
	Mode uint32 // git file mode (regular, executable, link, submodule)
}

// Entries lists everything below dir (slash-separated, "" for the root) at rev, depth first in
// tree order, with each entry's git id. skip, when not nil, leaves out an entry (rel relative to
// dir); a directory it skips is not entered. Nothing is read but trees.
func (r *Repo) Entries(rev, dir string, skip func(rel string, isDir bool) bool) ([]Entry, error) {
	tree, err := r.tree(rev)
	if err != nil {
		return nil, err
	}
	if dir = cleanPath(dir); dir != "" {
		if tree, err = tree.Tree(dir); err != nil {
			return nil, fmt.Errorf("%s at %s: %w", dir, rev, ErrNoSuchPath)
		}
	}
	var out []Entry
	var walk func(t *object.Tree, prefix string, depth int) error
	walk = func(t *object.Tree, prefix string, depth int) error {
		if depth > 256 {
			return fmt.Errorf("%s at %s: directories nested more than 256 deep", dir, rev)
		}
		for _, e := range t.Entries {
			rel := path.Join(prefix, e.Name)
			isDir := e.Mode == filemode.Dir
			if skip != nil && skip(rel, isDir) {
				continue
			}
			if !isDir {
				if len(out) >= MaxEntries {
					return fmt.Errorf("%s at %s: more than %d files", dir, rev, MaxEntries)
				}
				out = append(out, Entry{Path: rel, ID: e.Hash.String(), Mode: uint32(e.Mode)})
				continue
			}
			sub, err := t.Tree(e.Name)
			if err != nil {
				return fmt.Errorf("%s at %s: %w", rel, rev, err)
			}
			if err := walk(sub, rel, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(tree, "", 0)
}
