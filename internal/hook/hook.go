// Package hook installs cdkbot as a git pre-push hook and reads what git tells a pre-push hook,
// so the review a PR would get runs before the push leaves the machine.
package hook

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Marker identifies a hook cdkbot wrote; cdkbot never overwrites or removes any other hook.
const Marker = "# cdkbot pre-push hook"

// chained is where an existing hook is kept when cdkbot is installed in front of it.
const chained = "pre-push.local"

// HooksDir finds the directory git runs hooks from: core.hooksPath when set (relative to the
// repository root), else the hooks directory of the repository's common git dir. In a worktree
// made by git worktree add, .git is a file naming the worktree's own git dir, whose "commondir"
// names the repository's: git runs every worktree's hooks from there, so a hook written into
// the worktree's own git dir would never run and every push would go through unreviewed.
func HooksDir(root string) (string, error) {
	if out, err := exec.Command("git", "-C", root, "config", "core.hooksPath").Output(); err == nil {
		if p := strings.TrimSpace(string(out)); p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(root, p)
			}
			return p, nil
		}
	}
	gitDir := filepath.Join(root, ".git")
	info, err := os.Stat(gitDir)
	if err != nil {
		return "", fmt.Errorf("%s is not the top of a git repository: %w", root, err)
	}
	if !info.IsDir() {
		b, err := os.ReadFile(gitDir)
		if err != nil {
			return "", err
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok {
			return "", fmt.Errorf("%s: not a gitdir file", gitDir)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		gitDir = p
		if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			common := strings.TrimSpace(string(b))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gitDir, common)
			}
			gitDir = filepath.Clean(common)
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", gitDir, err)
		}
	}
	return filepath.Join(gitDir, "hooks"), nil
}

// InstallOptions tune Install.
type InstallOptions struct {
	Command string   // how the hook calls cdkbot (default "cdkbot", found on PATH)
	Args    []string // extra arguments for `cdkbot hook run`
	Force   bool     // replace an existing hook that is not cdkbot's
	Chain   bool     // keep an existing hook as pre-push.local and run it first
}

// ErrExists means a hook that is not cdkbot's is installed.
var ErrExists = errors.New("a pre-push hook that is not cdkbot's is installed")

// Install writes the pre-push hook into dir.
func Install(dir string, opts InstallOptions) (string, error) {
	if opts.Command == "" {
		opts.Command = "cdkbot"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "pre-push")
	existing, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist), err == nil && bytes.Contains(existing, []byte(Marker)):
	case err != nil:
		return "", err
	case opts.Chain:
		if err := os.Rename(path, filepath.Join(dir, chained)); err != nil {
			return "", err
		}
	case !opts.Force:
		return "", fmt.Errorf("%s: %w; use --chain to run it before cdkbot, or --force to replace it", path, ErrExists)
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n" + Marker + " (installed by `cdkbot hook install`; remove with `cdkbot hook uninstall`).\n")
	b.WriteString("# Bypass once with: git push --no-verify\n")
	b.WriteString("input=$(cat)\n")
	b.WriteString(`hooks=$(dirname "$0")` + "\n")
	b.WriteString(`if [ -x "$hooks/` + chained + `" ]; then ` +
		`printf '%s\n' "$input" | "$hooks/` + chained + `" "$@" || exit $?; fi` + "\n")
	// A cdkbot no longer installed must not block every push: say so and let the push through
	// (the review happens again in the pull request).
	b.WriteString("if ! command -v " + shellQuote(opts.Command) + " >/dev/null 2>&1; then\n" +
		"  echo \"cdkbot: \"" + shellQuote(opts.Command) + "\" not found, so this push was not reviewed; " +
		"install it, or remove the hook with 'cdkbot hook uninstall'\" >&2\n" +
		"  exit 0\nfi\n")
	b.WriteString("printf '%s\\n' \"$input\" | " + shellQuote(opts.Command) + " hook run")
	for _, a := range opts.Args {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString(` -- "$@"` + "\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o755); err != nil {
		return "", err
	}
	return path, nil
}

// Uninstall removes cdkbot's hook and puts a chained hook back.
func Uninstall(dir string) error {
	path := filepath.Join(dir, "pre-push")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: no pre-push hook is installed", path)
	}
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(Marker)) {
		return fmt.Errorf("%s is not cdkbot's hook; leaving it alone", path)
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, chained)); err == nil {
		return os.Rename(filepath.Join(dir, chained), path)
	}
	return nil
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Update is one ref git is about to push: "<local ref> <local sha> <remote ref> <remote sha>".
type Update struct {
	LocalRef, LocalSHA, RemoteRef, RemoteSHA string
}

// Deletes is true when the push deletes the remote ref.
func (u Update) Deletes() bool { return strings.Trim(u.LocalSHA, "0") == "" }

// NewBranch is true when the remote does not have the ref yet.
func (u Update) NewBranch() bool { return strings.Trim(u.RemoteSHA, "0") == "" }

// ParseUpdates reads git's pre-push input.
func ParseUpdates(r io.Reader) ([]Update, error) {
	var out []Update
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("pre-push input line %d: "+
				"want \"<local ref> <local sha> <remote ref> <remote sha>\", got %q", n, line)
		}
		out = append(out, Update{f[0], f[1], f[2], f[3]})
	}
	return out, sc.Err()
}
