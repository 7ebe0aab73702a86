package assembly

import (
	"strings"
	"testing"
	"testing/fstest"
)

// A reader's own bound is applied by size before the file is read, not after reading up to
// MaxFileSize: a 16 MiB bound on a validation report must not cost a 64 MiB read first.
func TestReadFileRefusesPastTheReadersBound(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"report.json": {Data: []byte(strings.Repeat("x", 100))}, "dir/x": {}}
	a := &Assembly{fsys: fsys}
	if b, err := a.ReadFile("report.json", 100); err != nil || len(b) != 100 {
		t.Fatalf("at the bound: %d bytes, %v", len(b), err)
	}
	_, err := a.ReadFile("report.json", 99)
	if err == nil || !strings.Contains(err.Error(), "report.json is 100 bytes, over cdkbot's limit of 99 bytes") {
		t.Errorf("past the bound: %v", err)
	}
	if _, err := a.ReadFile("dir", 100); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}
