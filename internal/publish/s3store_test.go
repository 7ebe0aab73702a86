package publish_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/publish"
	"github.com/cdkbot/cdkbot/internal/publishplan"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// A large object goes up in parts; a part that fails for good aborts the multipart upload, so
// neither an object nor a pending upload is left behind.
func TestS3StoreMultipartAndAbort(t *testing.T) {
	srv := moto.Start(t)
	proxy := srv.NewProxy(t)
	moto.Env(t, proxy.URL)
	ctx := context.Background()
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	client := awsconfig.S3(srv.Config())
	bucket := "assets"
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 40<<20)
	rand.New(rand.NewSource(1)).Read(data)
	store := publish.NewS3Store(cfg)

	if err := store.Upload(ctx, bucket, "big.zip", bytes.NewReader(data), int64(len(data)), "application/zip"); err != nil {
		t.Fatal(err)
	}
	obj, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("big.zip")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("object differs: %d bytes", len(got))
	}
	parts := 0
	for _, c := range proxy.Calls {
		if strings.HasPrefix(c, "PUT /assets/big.zip") {
			parts++
		}
	}
	if parts < 2 || !strings.Contains(aws.ToString(obj.ETag), "-") {
		t.Errorf("%d part uploads, ETag %s: want a multipart upload", parts, aws.ToString(obj.ETag))
	}

	// Part 3 is rejected for good (a 400 is not retried).
	proxy.Fault = func(r *http.Request, _ []byte, _ int) *moto.Fault {
		if r.Method == http.MethodPut && r.URL.Query().Get("partNumber") == "3" {
			return &moto.Fault{Status: http.StatusBadRequest, Code: "InvalidPart", Message: "injected"}
		}
		return nil
	}
	err = store.Upload(ctx, bucket, "broken.zip", bytes.NewReader(data), int64(len(data)), "application/zip")
	if err == nil {
		t.Fatal("upload with a failing part succeeded")
	}
	if ok, err := store.Exists(ctx, bucket, "broken.zip"); ok || err != nil {
		t.Errorf("after the failure: exists=%v err=%v; want no object", ok, err)
	}
	pending, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(pending.Uploads) != 0 {
		t.Errorf("%d multipart uploads left pending; the failed one must be aborted", len(pending.Uploads))
	}
	aborted := false
	for _, c := range proxy.Calls {
		aborted = aborted || strings.HasPrefix(c, "DELETE /assets/broken.zip")
	}
	if !aborted {
		t.Error("no AbortMultipartUpload request seen")
	}
}

func TestS3StoreNamesAMissingBucket(t *testing.T) {
	srv := moto.Start(t)
	moto.Env(t, srv.URL)
	cfg, err := awsconfig.Load(context.Background(), awsconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := publish.NewS3Store(cfg).Exists(context.Background(), "cdk-hnb659fds-assets-111111111111-us-east-1", "k.zip")
	if ok || err == nil || !strings.Contains(err.Error(), "bucket cdk-hnb659fds-assets-111111111111-us-east-1 does not exist") ||
		!strings.Contains(err.Error(), "cdk bootstrap") {
		t.Errorf("exists=%v err=%v", ok, err)
	}
}

// A destination that omits its region publishes to the bucket's own region.
func TestS3StoresResolveTheBucketRegion(t *testing.T) {
	srv := moto.Start(t)
	proxy := srv.NewProxy(t)
	moto.Env(t, proxy.URL)
	ctx := context.Background()
	bucket := "assets-in-frankfurt"
	_, err := awsconfig.S3(srv.Config()).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket,
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraintEuCentral1}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var regions []string
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("region", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			regions = append(regions, awsmiddleware.GetRegion(ctx)+" "+awsmiddleware.GetOperationName(ctx))
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
	stores := publish.S3Stores(awsconfig.NewSessions(cfg, awsconfig.Options{}))
	st, err := stores(ctx, publishplan.Destination{Bucket: bucket, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Exists(ctx, bucket, "k"); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(regions, ", ")
	if got != "us-east-1 GetBucketLocation, eu-central-1 HeadObject, eu-central-1 HeadBucket" {
		t.Errorf("requests: %s", got)
	}
}
