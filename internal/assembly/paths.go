package assembly

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// maxLinkHops bounds symlink resolution, as the kernel does (ELOOP).
const maxLinkHops = 40

// errNotExist marks a path that resolves safely but names nothing.
var errNotExist = errors.New("does not exist")

// resolveInside resolves p, as written in the manifest of the assembly in dir, to a root-relative
// path. It refuses absolute paths, paths that leave the root assembly, and paths through a
// symlink whose target leaves it: publishing reads these paths, and an asset must never pull in
// files from outside what was synthesized (a PR could otherwise upload the runner's secrets).
// Going up from a nested assembly into its parent is fine: Stages put assets there.
func resolveInside(fsys fs.FS, dir, p string) (string, error) {
	if p == "" {
		return "", errors.New("the path is empty")
	}
	if isAbsolute(p) {
		return "", fmt.Errorf("%q is an absolute path; asset and template paths must be relative to the assembly "+
			"(assets staged outside cdk.out, e.g. with --no-staging, cannot be published)", p)
	}
	joined := path.Join(dir, strings.ReplaceAll(p, `\`, "/"))
	if escapes(joined) {
		return "", fmt.Errorf("%q leads outside the assembly", p)
	}
	if err := checkLinks(fsys, joined, p); err != nil {
		return "", err
	}
	return joined, nil
}

func isAbsolute(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || (len(p) >= 2 && p[1] == ':')
}

func escapes(clean string) bool { return clean == ".." || strings.HasPrefix(clean, "../") }

// checkLinks follows every symlink along the root-relative path name and fails if one leads
// outside the root or the path does not exist.
func checkLinks(fsys fs.FS, name, written string) error {
	remaining := strings.Split(name, "/")
	cur := "."
	for hops := 0; len(remaining) > 0; {
		next := path.Join(cur, remaining[0])
		remaining = remaining[1:]
		if next == "." {
			continue
		}
		info, err := fs.Lstat(fsys, next)
		if errors.Is(err, fs.ErrNotExist) {
			return errNotExist
		}
		if err != nil {
			return fmt.Errorf("%q: %w", written, err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return fmt.Errorf("%q: too many levels of symbolic links", written)
		}
		target, err := fs.ReadLink(fsys, next)
		if err != nil {
			return fmt.Errorf("%q: %w", written, err)
		}
		if isAbsolute(target) {
			return fmt.Errorf("%q goes through symbolic link %s, which points to the absolute path %q outside the assembly",
				written, next, target)
		}
		resolved := path.Join(path.Dir(next), target)
		if escapes(resolved) {
			return fmt.Errorf("%q goes through symbolic link %s, which points outside the assembly (%s)", written, next, target)
		}
		// Continue from the link's target with what is left of the path.
		remaining = append(strings.Split(resolved, "/"), remaining...)
		cur = "."
	}
	return nil
}

// checkTreeLinks walks a directory asset and fails on the first symlink inside it that leads
// outside the root assembly.
func checkTreeLinks(fsys fs.FS, dir string) error {
	return fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if err := checkLinks(fsys, p, p); err != nil {
				if errors.Is(err, errNotExist) {
					return nil // a dangling link inside the assembly is the packager's business
				}
				return err
			}
		}
		return nil
	})
}
