package publish

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// memStore is an in-memory FileStore recording uploads.
type memStore struct {
	mu      sync.Mutex
	objects map[string][]byte
	calls   []string
}

func (m *memStore) Exists(_ context.Context, bucket, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, "head "+bucket+"/"+key)
	_, ok := m.objects[bucket+"/"+key]
	return ok, nil
}

func (m *memStore) Upload(_ context.Context, bucket, key string, body io.ReadSeeker, size int64, contentType string) error {
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, "put "+bucket+"/"+key+" "+contentType)
	m.objects[bucket+"/"+key] = b
	return nil
}

func stores(m *memStore) FileStores {
	return func(context.Context, publishplan.Destination) (FileStore, error) { return m, nil }
}

func job(id, src, packaging string) publishplan.Job {
	return publishplan.Job{ID: id, Manifest: "App.assets", Kind: publishplan.File, SourcePath: src, Packaging: packaging,
		Destinations: []publishplan.Destination{{ID: "current", Bucket: "b", Key: id}, {ID: "eu", Bucket: "b-eu", Key: id}}}
}

func TestRunRefusesEscapingSourcesBeforeAnyUpload(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(root, "ok.txt"), []byte("ok"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link"))
	for _, bad := range []string{"../secret", "/etc/passwd", "link", "a/../../x"} {
		t.Run(bad, func(t *testing.T) {
			m := &memStore{objects: map[string][]byte{}}
			p := &publishplan.Plan{Jobs: []publishplan.Job{job("good", "ok.txt", "file"), job("bad", bad, "file")}}
			_, err := Run(context.Background(), p, Options{Root: root, Files: stores(m)})
			if err == nil || !strings.Contains(err.Error(), "asset bad") || !strings.Contains(err.Error(), bad) {
				t.Fatalf("error %v, want one naming asset bad and %q", err, bad)
			}
			if len(m.calls) != 0 {
				t.Errorf("store used before the refusal: %v", m.calls)
			}
		})
	}
}

func TestRunPackagesOnceAndUploadsToEveryMissingDestination(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "site", "js"), 0o755)
	os.WriteFile(filepath.Join(root, "site", "index.html"), []byte("<h1>hi</h1>"), 0o644)
	os.WriteFile(filepath.Join(root, "site", "js", "app.js"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(root, "handler.js"), []byte("exports.h=1"), 0o644)
	m := &memStore{objects: map[string][]byte{"b-eu/handler": []byte("old")}}
	p := &publishplan.Plan{Jobs: []publishplan.Job{job("site", "site", "zip"), job("handler", "handler.js", "file")}}
	var events []string
	s, err := Run(context.Background(), p, Options{Root: root, Files: stores(m), Concurrency: 1,
		Progress: func(e Event) { events = append(events, e.Asset+" "+e.Destination+" "+string(e.State)) }})
	if err != nil {
		t.Fatal(err)
	}
	if s.Count(Published) != 3 || s.Count(Present) != 1 {
		t.Errorf("outcomes %+v", s.Outcomes)
	}
	want := "site  packaging"
	if !strings.Contains(strings.Join(events, "\n"), want) || strings.Count(strings.Join(events, "\n"), "packaging") != 1 {
		t.Errorf("events (one packaging of site expected):\n%s", strings.Join(events, "\n"))
	}
	if string(m.objects["b/handler"]) != "exports.h=1" || string(m.objects["b-eu/handler"]) != "old" {
		t.Errorf("handler objects: %q %q", m.objects["b/handler"], m.objects["b-eu/handler"])
	}
	if string(m.objects["b/site"][:2]) != "PK" || string(m.objects["b/site"]) != string(m.objects["b-eu/site"]) {
		t.Error("site: not the same zip in both destinations")
	}
	if !strings.Contains(strings.Join(m.calls, "\n"), "put b/site application/zip") {
		t.Errorf("calls: %v", m.calls)
	}
}

func TestDryRunUploadsNothing(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.json"), []byte("{}"), 0o644)
	m := &memStore{objects: map[string][]byte{"b/a": []byte("{}")}}
	s, err := Run(context.Background(), &publishplan.Plan{Jobs: []publishplan.Job{job("a", "a.json", "file")}},
		Options{Root: root, Files: stores(m), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Count(Present) != 1 || s.Count(Missing) != 1 || len(m.objects) != 1 {
		t.Errorf("outcomes %+v, objects %d", s.Outcomes, len(m.objects))
	}
}

func TestUnsupportedRefusedUpFront(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.json"), []byte("{}"), 0o644)
	os.Mkdir(filepath.Join(root, "img"), 0o755)
	img := publishplan.Job{ID: "img", Manifest: "App.assets", Kind: publishplan.Image,
		Image: &assembly.DockerImageSource{ResolvedDirectory: "img"}}
	exe := publishplan.Job{ID: "exe", Manifest: "App.assets", Kind: publishplan.File, Executable: []string{"sh", "-c", "curl evil"}}
	for _, tc := range []struct {
		job  publishplan.Job
		want string
	}{
		{img, "asset img (App.assets) is a docker image: no image publisher configured"},
		{exe, "exe (App.assets): built by running \"sh -c curl evil\""},
	} {
		m := &memStore{objects: map[string][]byte{}}
		p := &publishplan.Plan{Jobs: []publishplan.Job{job("a", "a.json", "file"), tc.job}}
		_, err := Run(context.Background(), p, Options{Root: root, Files: stores(m)})
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(m.calls) != 0 {
			t.Errorf("err %v, calls %v; want %q before any call", err, m.calls, tc.want)
		}
	}
}

func TestExecutableAssetsRunOnlyWhenAllowed(t *testing.T) {
	root := t.TempDir()
	exe := publishplan.Job{ID: "exe", Manifest: "App.assets", Kind: publishplan.File,
		Executable:   []string{"sh", "-c", "printf built > out.zip && echo building >&2 && echo out.zip"},
		Destinations: []publishplan.Destination{{ID: "d", Bucket: "b", Key: "exe.zip"}}}
	p := &publishplan.Plan{Jobs: []publishplan.Job{exe}}
	m := &memStore{objects: map[string][]byte{}}
	_, err := Run(context.Background(), p, Options{Root: root, Files: stores(m)})
	if err == nil || !strings.Contains(err.Error(), "--allow-executables") {
		t.Fatalf("not allowed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "out.zip")); err == nil {
		t.Fatal("the command ran although not allowed")
	}
	s, err := Run(context.Background(), p, Options{Root: root, Files: stores(m), AllowExecutables: true})
	if err != nil || s.Count(Published) != 1 {
		t.Fatalf("allowed: %v %+v", err, s.Outcomes)
	}
	if string(m.objects["b/exe.zip"]) != "built" || !strings.Contains(strings.Join(m.calls, " "), "application/zip") {
		t.Errorf("uploaded %q, calls %v", m.objects["b/exe.zip"], m.calls)
	}
	p.Jobs[0].Executable = []string{"sh", "-c", "echo broken >&2; exit 3"}
	p.Jobs[0].Destinations[0].Key = "other.zip"
	_, err = Run(context.Background(), p, Options{Root: root, Files: stores(m), AllowExecutables: true})
	if err == nil || !strings.Contains(err.Error(), "broken") || !strings.Contains(err.Error(), "asset exe") {
		t.Errorf("failing command: %v", err)
	}
}

func TestRunReportsUploadProgressPerMiB(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "big.bin"), make([]byte, 3<<20+5), 0o644)
	m := &memStore{objects: map[string][]byte{}}
	j := job("big", "big.bin", "file")
	j.Destinations = j.Destinations[:1]
	var sent []int64
	_, err := Run(context.Background(), &publishplan.Plan{Jobs: []publishplan.Job{j}}, Options{Root: root, Files: stores(m),
		Progress: func(e Event) {
			if e.State == Uploading && e.Sent > 0 {
				sent = append(sent, e.Sent)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	// At most one event per MiB read, increasing, the last at the full size.
	if len(sent) < 3 || len(sent) > 4 || sent[0] < 1<<20 || sent[len(sent)-1] != 3<<20+5 {
		t.Errorf("progress events: %v", sent)
	}
	for i := 1; i < len(sent); i++ {
		if sent[i]-sent[i-1] < 1<<20 && i != len(sent)-1 {
			t.Errorf("events closer than 1 MiB: %v", sent)
		}
	}
}

// A docker build that writes files (buildx's local, tar or oci exporters) could rewrite the
// assembly after a deploy compared it with its review: refused before anything is published.
func TestCheckRefusesBuildsThatWriteToTheDisk(t *testing.T) {
	for outputs, refused := range map[string]bool{
		"type=registry":                  false,
		"type=image,push=true":           false,
		"type=local,dest=.":              true,
		"type=tar,dest=/tmp/x.tar":       true,
		"type=oci,dest=out":              true,
		"type=registry,dest=/tmp/sneaky": true,
		"./out":                          true,
	} {
		if got := diskOutput([]string{outputs}) != ""; got != refused {
			t.Errorf("--output %s: refused %v, want %v", outputs, got, refused)
		}
	}
}
