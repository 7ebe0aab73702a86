// Command benchpublish prepares the side-by-side publish benchmark (scripts/benchpublish/run.sh):
//
//	benchpublish gen DIR [N]   write an assembly of N file assets (default 40) of 1–20 MB of
//	                           incompressible data: every 4th a directory (zip packaging) of
//	                           several files, the others single files; destination: moto's
//	                           bootstrap bucket through the file publishing role
//	benchpublish reset         empty (or create) that bucket at $AWS_ENDPOINT_URL
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
)

const (
	bucket = "cdk-hnb659fds-assets-123456789012-us-east-1"
	role   = "arn:aws:iam::123456789012:role/cdk-hnb659fds-file-publishing-role-123456789012-us-east-1"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchpublish gen DIR [N] | reset")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "gen":
		n := 40
		if len(os.Args) > 3 {
			n, _ = strconv.Atoi(os.Args[3])
		}
		must(gen(os.Args[2], n))
	case "reset":
		must(reset(context.Background()))
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}

func gen(dir string, n int) error {
	rng := rand.New(rand.NewSource(42))
	files := map[string]any{}
	var total int64
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%x", sha256.Sum256([]byte(strconv.Itoa(i))))
		size := int64(1+rng.Intn(20)) << 20
		total += size
		src, packaging, key := "asset."+id+".bin", "file", id+".bin"
		if i%4 == 0 {
			src, packaging, key = "asset."+id, "zip", id+".zip"
			parts := 4
			for p := 0; p < parts; p++ {
				if err := writeRandom(filepath.Join(dir, src, "part"+strconv.Itoa(p)), size/int64(parts), rng); err != nil {
					return err
				}
			}
		} else if err := writeRandom(filepath.Join(dir, src), size, rng); err != nil {
			return err
		}
		files[id] = map[string]any{
			"source": map[string]any{"path": src, "packaging": packaging},
			"destinations": map[string]any{"123456789012-us-east-1": map[string]any{
				"bucketName": bucket, "objectKey": key, "region": "us-east-1", "assumeRoleArn": role}},
		}
	}
	// Schema 36: what both cdkbot and the reference cdk-assets (≤ 54) read.
	if err := writeJSON(filepath.Join(dir, "Bench.assets.json"), map[string]any{
		"version": "36.0.0", "files": files, "dockerImages": map[string]any{},
	}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "benchpublish: %d assets, %.0f MB\n", n, float64(total)/(1<<20))
	return writeJSON(filepath.Join(dir, "manifest.json"), map[string]any{"version": "36.0.0", "artifacts": map[string]any{
		"Bench.assets": map[string]any{"type": "cdk:asset-manifest", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"file": "Bench.assets.json"}}}})
}

func writeRandom(path string, size int64, rng *rand.Rand) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := io.CopyN(w, rng, size); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func reset(ctx context.Context) error {
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		return err
	}
	client := awsconfig.S3(cfg)
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
		_, err = client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
		return err
	}
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
				return err
			}
		}
	}
	return nil
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchpublish:", err)
		os.Exit(1)
	}
}
