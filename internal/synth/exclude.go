package synth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultExcludes are the files of the app's directory a synthesis is taken not to read:
// documentation and repository settings at its top. They are neither checked out nor part of
// the synthesis cache key, so a commit that only touches them reuses the assembly. They are
// anchored at the app's directory: a README.md inside an asset directory (lambda/README.md) is
// part of the asset, and stays in. An app that does read one fails to synthesize, saying so,
// rather than being reused stale; .cdkbot.yml's synth.exclude replaces the list.
var DefaultExcludes = []string{
	"/*.md", "/docs/", "/.github/", "/.gitlab/", "/.vscode/", "/.idea/", "/.devcontainer/",
	"/LICENSE", "/LICENSE.txt", "/NOTICE", "/CODEOWNERS", "/.gitignore", "/.gitattributes", "/.editorconfig",
	"/.pre-commit-config.yaml", "/.cdkbot.yml", "/test/", "/tests/", "/__tests__/", "/jest.config.js", "/jest.config.ts",
}

// MaxExcludes bounds the patterns a configuration may give.
const MaxExcludes = 200

// Excludes are patterns of files of the app's directory left out of its synthesis, written as
// cdk.json's watch.exclude and .gitignore write them: a pattern with a slash at its start or
// inside is anchored at the app's directory, one without matches a name at any depth; a
// trailing slash matches directories (and all below); `*`, `?` and `[…]` match within a name,
// `**` any number of directories. The files cdkbot itself reads to synthesize (cdk.json,
// cdk.context.json, the toolchains' project and lock files at the app's top) are never left out.
type Excludes struct {
	patterns []exclude
	source   []string
}

type exclude struct {
	parts    []string // slash-separated segments; "**" is any number of them
	anchored bool
	dirOnly  bool
}

// ParseExcludes checks and compiles patterns.
func ParseExcludes(patterns []string) (Excludes, error) {
	if len(patterns) > MaxExcludes {
		return Excludes{}, fmt.Errorf("%d exclude patterns; at most %d", len(patterns), MaxExcludes)
	}
	e := Excludes{source: slices.Clone(patterns)}
	for _, p := range patterns {
		x := exclude{}
		q := strings.TrimSpace(p)
		if q == "" || strings.HasPrefix(q, "!") || strings.Contains(q, "\\") {
			return Excludes{}, fmt.Errorf("exclude pattern %q: give a glob such as *.md or /docs/ "+
				"(no negation, no backslash)", p)
		}
		x.dirOnly = strings.HasSuffix(q, "/")
		q = strings.Trim(q, "/")
		x.anchored = strings.HasPrefix(strings.TrimSpace(p), "/") || strings.Contains(q, "/")
		if q == "" {
			return Excludes{}, fmt.Errorf("exclude pattern %q would leave out the whole app", p)
		}
		x.parts = strings.Split(q, "/")
		for _, part := range x.parts {
			if part == "." || part == ".." {
				return Excludes{}, fmt.Errorf("exclude pattern %q: no . or .. segments", p)
			}
			if _, err := path.Match(part, ""); err != nil {
				return Excludes{}, fmt.Errorf("exclude pattern %q is not a valid glob: %w", p, err)
			}
		}
		if !x.anchored {
			x.parts = append([]string{"**"}, x.parts...)
		}
		e.patterns = append(e.patterns, x)
	}
	return e, nil
}

// Empty is true when nothing is excluded.
func (e Excludes) Empty() bool { return len(e.patterns) == 0 }

// Patterns returns the patterns as given (for a cache key and messages).
func (e Excludes) Patterns() []string { return slices.Clone(e.source) }

// neverExcluded are files at the app's top that cdkbot reads to synthesize.
func neverExcluded(rel string) bool {
	return rel == "cdk.json" || rel == "cdk.context.json" || slices.Contains(WorkspaceFiles(), rel)
}

// Excluded says whether rel (slash-separated, relative to the app's directory) is left out;
// dir says it is a directory. A file below an excluded directory is excluded too.
func (e Excludes) Excluded(rel string, dir bool) bool {
	if neverExcluded(rel) {
		return false
	}
	segs := strings.Split(rel, "/")
	for _, x := range e.patterns {
		// Every directory above rel, and rel itself.
		for n := 1; n <= len(segs); n++ {
			isDir := dir || n < len(segs)
			if x.dirOnly && !isDir {
				continue
			}
			if matchParts(x.parts, segs[:n]) {
				return true
			}
		}
	}
	return false
}

// matchParts matches glob segments, where "**" is any number of segments, against a path's.
func matchParts(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchParts(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// RemoveExcluded deletes the excluded files and directories from a checkout of the app in dir,
// without following links, so the app cannot read what its cache key leaves out. keep (nil for
// none) spares paths named on purpose (--synth-inputs), and what leads to them.
func RemoveExcluded(dir string, e Excludes, keep func(rel string) bool) error {
	if e.Empty() {
		return nil
	}
	var remove []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if e.Excluded(filepath.ToSlash(rel), d.IsDir()) && (keep == nil || !keep(filepath.ToSlash(rel))) {
			remove = append(remove, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range remove {
		if err := os.RemoveAll(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
