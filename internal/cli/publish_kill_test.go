package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// A publish killed with SIGKILL half way leaves only whole objects, and a re-run completes
// the set: nothing partial becomes visible, nothing is uploaded twice.
func TestPublishKilledHalfWayThenRerun(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	bucket := "cdk-hnb659fds-assets-123456789012-us-east-1"
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(3))
	want := map[string][32]byte{} // key -> sha256
	files := map[string]any{}
	for i, size := range []int{8 << 20, 48 << 20, 8 << 20} {
		id := strings.Repeat(string(rune('a'+i)), 64)
		data := make([]byte, size)
		rng.Read(data)
		if err := os.WriteFile(filepath.Join(dir, "asset."+id+".bin"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		want[id+".bin"] = sha256.Sum256(data)
		files[id] = map[string]any{"source": map[string]any{"path": "asset." + id + ".bin", "packaging": "file"},
			"destinations": map[string]any{"d": map[string]any{"bucketName": bucket, "objectKey": id + ".bin", "region": "us-east-1",
				"assumeRoleArn": "arn:aws:iam::123456789012:role/cdk-hnb659fds-file-publishing-role-123456789012-us-east-1"}}}
	}
	writeJSONFile(t, filepath.Join(dir, "App.assets.json"), map[string]any{"version": "36.0.0", "files": files})
	writeJSONFile(t, filepath.Join(dir, "manifest.json"), map[string]any{"version": "36.0.0", "artifacts": map[string]any{
		"App.assets": map[string]any{"type": "cdk:asset-manifest", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"file": "App.assets.json"}}}})

	// First run, one asset at a time: killed as soon as the first asset is published, while
	// the second (multipart) is on its way.
	args, _ := json.Marshal([]string{"publish", dir, "--concurrency", "1"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CDKBOT_TEST_AS_CLI="+string(args))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := make(chan string, 1)
	go func() {
		var seen strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "uploading bbbbbbbbbbbb") {
				time.Sleep(50 * time.Millisecond) // part way into the 48 MB upload
				cmd.Process.Kill()
				break
			}
		}
		io.Copy(io.Discard, stderr)
		killed <- seen.String()
	}()
	log := <-killed
	if err := cmd.Wait(); err == nil {
		t.Fatalf("the first run finished before it could be killed:\n%s", log)
	}
	client := awsconfig.S3(srv.Config())
	check := func(stage string) int {
		out, err := client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out.Contents {
			obj, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(obj.Body)
			obj.Body.Close()
			if sha256.Sum256(body) != want[*o.Key] {
				t.Errorf("%s: %s is not the whole asset (%d bytes)", stage, *o.Key, len(body))
			}
		}
		return len(out.Contents)
	}
	if n := check("after the kill"); n != 1 {
		t.Errorf("after the kill: %d objects, want only the first, whole\n%s", n, log)
	}

	code, stdout, errOut := run(t, "publish", dir)
	if code != ExitOK {
		t.Fatalf("re-run: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(stdout, "2 published, 1 present") {
		t.Errorf("re-run summary:\n%s", stdout)
	}
	if n := check("after the re-run"); n != 3 {
		t.Errorf("after the re-run: %d objects, want 3", n)
	}
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
