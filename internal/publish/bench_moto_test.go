package publish_test

import (
	"bufio"
	"context"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/publish"
	"github.com/cdkbot/cdkbot/internal/publishplan"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// BenchmarkPublishLargeAsset zips and publishes one directory asset of CDKBOT_BENCH_MB
// megabytes (default 1024) of incompressible data to moto and reports the process's peak RSS
// (VmHWM), the figure behind "a 1 GB asset publishes in under 150 MB". Run it alone so the
// peak is its own:
//
//	go test ./internal/publish -run x -bench PublishLargeAsset -benchtime 1x
func BenchmarkPublishLargeAsset(b *testing.B) {
	mb := 1024
	if v, err := strconv.Atoi(os.Getenv("CDKBOT_BENCH_MB")); err == nil && v > 0 {
		mb = v
	}
	root := b.TempDir()
	dir := filepath.Join(root, "asset.big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "blob.bin"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := io.CopyN(w, rand.New(rand.NewSource(7)), int64(mb)<<20); err != nil {
		b.Fatal(err)
	}
	w.Flush()
	f.Close()

	srv := moto.Start(b)
	for k, v := range map[string]string{"AWS_ENDPOINT_URL": srv.URL, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
		"AWS_REGION": moto.Region, "AWS_EC2_METADATA_DISABLED": "true"} {
		b.Setenv(k, v)
	}
	ctx := context.Background()
	bucket := "bench-assets"
	if _, err := awsconfig.S3(srv.Config()).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		b.Fatal(err)
	}
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(mb) << 20)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p := &publishplan.Plan{Jobs: []publishplan.Job{{ID: "big", Kind: publishplan.File, SourcePath: "asset.big", Packaging: "zip",
			Destinations: []publishplan.Destination{{ID: "d", Bucket: bucket, Key: "big-" + strconv.Itoa(i) + ".zip"}}}}}
		s, err := publish.Run(ctx, p, publish.Options{Root: root, Files: publish.S3Stores(awsconfig.NewSessions(cfg, awsconfig.Options{})),
			TempDir: b.TempDir()})
		if err != nil || s.Count(publish.Published) != 1 {
			b.Fatalf("%v %+v", err, s)
		}
	}
	b.StopTimer()
	b.ReportMetric(peakRSSMB(b), "peakRSS-MB")
}

func peakRSSMB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
