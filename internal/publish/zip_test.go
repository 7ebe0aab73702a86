package publish

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
	"time"
)

func tree(t testing.TB, root string, order []string, mtime time.Time) string {
	t.Helper()
	dir := filepath.Join(root, "asset.abc")
	files := map[string]string{"index.js": "exports.handler = 1;", "lib/util.js": "module.exports = 2;", "lib/deep/data.json": "{}", "run.sh": "#!/bin/sh\n"}
	for _, name := range order {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o700)
		mode := os.FileMode(0o600)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o700
		}
		if err := os.WriteFile(p, []byte(files[name]), mode); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, mtime, mtime)
	}
	return dir
}

func zipBytes(t testing.TB, root, dir string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	sum, err := Zip(&b, root, dir)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), sum
}

// Zipping the same tree twice (different mtimes, permissions, order of creation) gives identical bytes.
func TestZipIsDeterministic(t *testing.T) {
	r1, r2 := t.TempDir(), t.TempDir()
	d1 := tree(t, r1, []string{"index.js", "lib/util.js", "lib/deep/data.json", "run.sh"}, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	d2 := tree(t, r2, []string{"run.sh", "lib/deep/data.json", "index.js", "lib/util.js"}, time.Date(2026, 6, 6, 6, 6, 6, 0, time.UTC))
	b1, s1 := zipBytes(t, r1, d1)
	b2, s2 := zipBytes(t, r2, d2)
	if !bytes.Equal(b1, b2) || s1 != s2 {
		t.Fatal("the same tree zipped to different bytes")
	}
	if sum := sha256.Sum256(b1); s1 != string(hexOf(sum[:])) {
		t.Error("returned hash is not the archive's")
	}
	zr, err := zip.NewReader(bytes.NewReader(b1), int64(len(b1)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(zipEpoch) {
			t.Errorf("%s: time %s", f.Name, f.Modified)
		}
		if f.Name == "run.sh" && f.Mode().Perm() != 0o755 || f.Name == "index.js" && f.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %s", f.Name, f.Mode())
		}
	}
	if got := strings.Join(names, " "); got != "index.js lib/ lib/deep/ lib/deep/data.json lib/util.js run.sh" {
		t.Errorf("entries %s", got)
	}
}

func TestZipSymlinks(t *testing.T) {
	root := t.TempDir()
	dir := tree(t, root, []string{"index.js"}, time.Now())
	os.MkdirAll(filepath.Join(root, "shared"), 0o755)
	os.WriteFile(filepath.Join(root, "shared", "lib.js"), []byte("shared"), 0o644)
	if err := os.Symlink("../shared/lib.js", filepath.Join(dir, "lib.js")); err != nil {
		t.Fatal(err)
	}
	b, _ := zipBytes(t, root, dir)
	zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	found := false
	for _, f := range zr.File {
		if f.Name == "lib.js" {
			rc, _ := f.Open()
			c, _ := io.ReadAll(rc)
			found = string(c) == "shared"
		}
	}
	if !found {
		t.Error("a symlink inside the assembly is followed")
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if _, err := Zip(io.Discard, root, dir); err == nil || !strings.Contains(err.Error(), "outside the assembly") {
		t.Errorf("symlink outside: %v", err)
	}
}

func hexOf(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, len(b)*2)
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

// The zip's throughput against the machine's plain deflate + sha256 of the same bytes: zipping
// should cost little more than compressing (goal ≥ 70%).
const benchSize = 32 << 20

func benchData(b *testing.B) (string, string) {
	root := b.TempDir()
	dir := filepath.Join(root, "asset")
	os.MkdirAll(dir, 0o755)
	half := make([]byte, benchSize/2)
	rand.Read(half)
	text := bytes.Repeat([]byte("exports.handler = async (event) => ({ statusCode: 200 });\n"), benchSize/2/58+1)[:benchSize/2]
	for i, part := range [][]byte{half, text} {
		os.WriteFile(filepath.Join(dir, "part"+string(rune('0'+i))), part, 0o644)
	}
	return root, dir
}

func BenchmarkZip(b *testing.B) {
	root, dir := benchData(b)
	b.SetBytes(benchSize)
	for b.Loop() {
		if _, err := Zip(io.Discard, root, dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBaselineDeflateSHA256(b *testing.B) {
	_, dir := benchData(b)
	b.SetBytes(benchSize)
	for b.Loop() {
		h := sha256.New()
		fw, _ := flate.NewWriter(h, zipLevel) // the same compressor and level as Zip
		for _, n := range []string{"part0", "part1"} {
			f, _ := os.Open(filepath.Join(dir, n))
			io.Copy(fw, f)
			f.Close()
		}
		fw.Close()
	}
}
