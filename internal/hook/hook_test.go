package hook

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallUninstallChainForce(t *testing.T) {
	dir := t.TempDir()
	path, err := Install(dir, InstallOptions{Command: "/opt/cdk bot/cdkbot", Args: []string{"--fail-on", "replace,destroy"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `'/opt/cdk bot/cdkbot' hook run --fail-on replace,destroy -- "$@"`) || !strings.Contains(string(b), Marker) {
		t.Errorf("hook script:\n%s", b)
	}
	if _, err := Install(dir, InstallOptions{}); err != nil {
		t.Errorf("reinstalling over our own hook: %v", err)
	}
	if err := Uninstall(dir); err != nil {
		t.Fatal(err)
	}
	// Someone else's hook is never overwritten without --force, and --chain keeps it.
	os.WriteFile(filepath.Join(dir, "pre-push"), []byte("#!/bin/sh\necho theirs\n"), 0o755)
	if _, err := Install(dir, InstallOptions{}); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "--chain") {
		t.Errorf("overwrote a foreign hook: %v", err)
	}
	if err := Uninstall(dir); err == nil || !strings.Contains(err.Error(), "not cdkbot's") {
		t.Errorf("removed a foreign hook: %v", err)
	}
	if _, err := Install(dir, InstallOptions{Chain: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pre-push.local")); !strings.Contains(string(b), "theirs") {
		t.Error("chained hook not kept")
	}
	if err := Uninstall(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pre-push")); !strings.Contains(string(b), "theirs") {
		t.Error("chained hook not restored")
	}
	if _, err := Install(dir, InstallOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
}

func TestParseUpdates(t *testing.T) {
	in := "refs/heads/main 1111111111111111111111111111111111111111 refs/heads/main 2222222222222222222222222222222222222222\n" +
		"refs/heads/new 3333333333333333333333333333333333333333 refs/heads/new 0000000000000000000000000000000000000000\n" +
		"(delete) 0000000000000000000000000000000000000000 refs/heads/old 4444444444444444444444444444444444444444\n"
	us, err := ParseUpdates(strings.NewReader(in))
	if err != nil || len(us) != 3 {
		t.Fatal(err, us)
	}
	if us[0].NewBranch() || us[0].Deletes() || !us[1].NewBranch() || !us[2].Deletes() {
		t.Errorf("%+v", us)
	}
	if _, err := ParseUpdates(strings.NewReader("garbage line\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed input: %v", err)
	}
}

// A hook whose cdkbot is gone lets the push through with a warning instead of blocking every
// push; with cdkbot present, its verdict stands.
func TestHookWithoutCdkbot(t *testing.T) {
	dir := t.TempDir()
	path, err := Install(dir, InstallOptions{Command: filepath.Join(dir, "missing", "cdkbot")})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", path, "origin", "url")
	cmd.Stdin = strings.NewReader("refs/heads/main abc refs/heads/main def\n")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "not found, so this push was not reviewed") {
		t.Errorf("missing cdkbot: %v\n%s", err, out)
	}
	fake := filepath.Join(dir, "cdkbot")
	os.WriteFile(fake, []byte("#!/bin/sh\necho blocked >&2\nexit 1\n"), 0o755)
	if path, err = Install(dir, InstallOptions{Command: fake}); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command("sh", path, "origin", "url")
	cmd.Stdin = strings.NewReader("refs/heads/main abc refs/heads/main def\n")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "blocked") {
		t.Errorf("present cdkbot's verdict lost: %v\n%s", err, out)
	}
}
