package publish

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// multipartThreshold is the size from which objects go up in parts. Below it a single
// PutObject streams the file (seekable, so the SDK reads it without buffering it whole).
const multipartThreshold = 32 << 20

// multipartSlots bounds multipart uploads at once across every store: the transfer manager
// buffers its parts in memory (about 50 MB per upload), and memory must stay flat however many
// assets run in parallel.
var multipartSlots = make(chan struct{}, 2)

// S3Store publishes to S3 through one client (one role, one region). Objects above
// multipartThreshold go up in parts through the SDK's transfer manager, which aborts the
// multipart upload on failure so no partial object ever becomes visible; a single PutObject
// is atomic by nature.
type S3Store struct {
	client *s3.Client
	tm     *transfermanager.Client

	mu      sync.Mutex
	enc     map[string]encryption // bucket -> default encryption, asked once
	buckets map[string]error      // bucket -> result of HeadBucket, asked once
}

type encryption struct {
	algorithm s3types.ServerSideEncryption
	kmsKeyID  string
}

// NewS3Store wraps an AWS configuration (already acting as the publishing role).
func NewS3Store(cfg aws.Config) *S3Store {
	client := awsconfig.S3(cfg)
	return &S3Store{
		client: client,
		tm: transfermanager.New(client, func(o *transfermanager.Options) {
			o.FailTimeout = 30 * time.Second // abort the multipart upload even when ctx is cancelled
			o.MultipartUploadThreshold = multipartThreshold
			o.PartSizeBytes = 8 << 20
			o.Concurrency = 4
		}),
		enc:     map[string]encryption{},
		buckets: map[string]error{},
	}
}

// Exists implements FileStore with HeadObject.
func (s *S3Store) Exists(ctx context.Context, bucket, key string) (bool, error) {
	_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err == nil {
		return true, nil
	}
	var nf *s3types.NotFound
	var nsk *s3types.NoSuchKey
	if errors.As(err, &nf) || errors.As(err, &nsk) || httpStatus(err) == http.StatusNotFound {
		// A HEAD answers 404 for a missing bucket as for a missing key; say which, so a dry run
		// does not promise an upload into a bucket that is not there.
		return false, s.bucketExists(ctx, bucket)
	}
	return false, errors.New("check s3://" + bucket + "/" + key + ": " + awsconfig.Explain(err))
}

func (s *S3Store) bucketExists(ctx context.Context, bucket string) error {
	s.mu.Lock()
	err, ok := s.buckets[bucket]
	s.mu.Unlock()
	if ok {
		return err
	}
	_, err = s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket})
	switch {
	case err == nil, httpStatus(err) == http.StatusForbidden: // exists, or not ours to ask
		err = nil
	case httpStatus(err) == http.StatusNotFound:
		err = errors.New("bucket " + bucket + " does not exist: is the environment bootstrapped (`cdk bootstrap`)?")
	default:
		err = errors.New("check bucket " + bucket + ": " + awsconfig.Explain(err))
	}
	s.mu.Lock()
	s.buckets[bucket] = err
	s.mu.Unlock()
	return err
}

// bucketRegion asks where a bucket lives.
func (s *S3Store) bucketRegion(ctx context.Context, bucket string) (string, error) {
	out, err := s.client.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: &bucket})
	if err != nil {
		return "", errors.New("find the region of bucket " + bucket + " (or give the stack an explicit env): " +
			awsconfig.Explain(err))
	}
	switch c := string(out.LocationConstraint); c {
	case "":
		return "us-east-1", nil // S3 reports the original region as empty
	case "EU":
		return "eu-west-1", nil // and an old alias
	default:
		return c, nil
	}
}

// Upload implements FileStore. A bucket whose default encryption is KMS gets the KMS headers
// (bucket policies of hardened bootstraps deny uploads without them).
func (s *S3Store) Upload(
	ctx context.Context, bucket, key string, body io.ReadSeeker, size int64, contentType string,
) error {
	enc, err := s.encryption(ctx, bucket)
	if err != nil {
		return err
	}
	var sse s3types.ServerSideEncryption
	var kmsKey *string
	switch enc.algorithm {
	case s3types.ServerSideEncryptionAwsKms:
		sse = s3types.ServerSideEncryptionAwsKms
		if enc.kmsKeyID != "" {
			kmsKey = &enc.kmsKeyID
		}
	case s3types.ServerSideEncryptionAes256:
		sse = s3types.ServerSideEncryptionAes256
	}
	if size < multipartThreshold {
		_, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: body, ContentLength: &size,
			ContentType: &contentType, ServerSideEncryption: sse, SSEKMSKeyId: kmsKey})
		if err != nil {
			return errors.New(awsconfig.Explain(err))
		}
		return nil
	}
	select {
	case multipartSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-multipartSlots }()
	in := &transfermanager.UploadObjectInput{
		Bucket: &bucket, Key: &key, Body: body, ContentLength: &size, ContentType: &contentType, SSEKMSKeyID: kmsKey,
	}
	if sse != "" {
		in.ServerSideEncryption = tmtypes.ServerSideEncryption(sse)
	}
	if _, err := s.tm.UploadObject(ctx, in); err != nil {
		return errors.New(awsconfig.Explain(err))
	}
	return nil
}

// AbortLeftovers aborts the unfinished multipart uploads of key that an earlier run left (a run
// killed mid-upload cannot abort its own): they are billed storage nobody can see.
func (s *S3Store) AbortLeftovers(ctx context.Context, bucket, key string) (int, error) {
	out, err := s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket, Prefix: &key})
	if err != nil {
		return 0, errors.New(awsconfig.Explain(err))
	}
	n := 0
	for _, u := range out.Uploads {
		if aws.ToString(u.Key) != key {
			continue
		}
		if _, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
			Bucket: &bucket, Key: &key, UploadId: u.UploadId,
		}); err != nil {
			return n, errors.New(awsconfig.Explain(err))
		}
		n++
	}
	return n, nil
}

// encryption asks the bucket's default encryption once. A publishing role may not be allowed
// to read it; then the bucket's default applies, as with cdk-assets.
func (s *S3Store) encryption(ctx context.Context, bucket string) (encryption, error) {
	s.mu.Lock()
	e, ok := s.enc[bucket]
	s.mu.Unlock()
	if ok {
		return e, nil
	}
	out, err := s.client.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: &bucket})
	switch {
	case err == nil:
		if c := out.ServerSideEncryptionConfiguration; c != nil && len(c.Rules) > 0 &&
			c.Rules[0].ApplyServerSideEncryptionByDefault != nil {
			d := c.Rules[0].ApplyServerSideEncryptionByDefault
			e = encryption{algorithm: d.SSEAlgorithm, kmsKeyID: aws.ToString(d.KMSMasterKeyID)}
		}
	case httpStatus(err) == http.StatusNotFound && !isCode(err, "NoSuchBucket"), httpStatus(err) == http.StatusForbidden:
		// No encryption configuration, or not ours to read.
	case isCode(err, "NoSuchBucket"):
		return e, errors.New("bucket " + bucket + " does not exist: is the environment bootstrapped (`cdk bootstrap`)?")
	default:
		return e, errors.New("read encryption of bucket " + bucket + ": " + awsconfig.Explain(err))
	}
	s.mu.Lock()
	s.enc[bucket] = e
	s.mu.Unlock()
	return e, nil
}

func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func isCode(err error, code string) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == code
}

// S3Stores opens one S3Store per role and region, each acting as the destination's publishing
// role through the session cache.
// A destination without a region (an environment-agnostic stack and no configured region)
// goes to its bucket's own region, asked with GetBucketLocation.
func S3Stores(sessions *awsconfig.Sessions) FileStores {
	open := perRole(sessions, NewS3Store)
	var mu sync.Mutex
	regions := map[string]string{} // bucket -> region
	return func(ctx context.Context, d publishplan.Destination) (FileStore, error) {
		if d.Region == "" {
			mu.Lock()
			region, ok := regions[d.Bucket]
			mu.Unlock()
			if !ok {
				// GetBucketLocation answers for a bucket in any region from us-east-1.
				probe := d
				probe.Region = "us-east-1"
				st, err := open(ctx, probe)
				if err != nil {
					return nil, err
				}
				if region, err = st.bucketRegion(ctx, d.Bucket); err != nil {
					return nil, err
				}
				mu.Lock()
				regions[d.Bucket] = region
				mu.Unlock()
			}
			d.Region = region
		}
		st, err := open(ctx, d)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return st, nil
	}
}

// perRole caches one store per role and region, built by open from that role's session.
func perRole[T any](
	sessions *awsconfig.Sessions, open func(aws.Config) T,
) func(context.Context, publishplan.Destination) (T, error) {
	var mu sync.Mutex
	stores := map[awsconfig.Role]T{}
	return func(ctx context.Context, d publishplan.Destination) (T, error) {
		role := awsconfig.Role{ARN: d.AssumeRoleARN, ExternalID: d.AssumeRoleExternalID, Region: d.Region}
		cfg, err := sessions.For(ctx, role)
		if err != nil {
			var zero T
			return zero, err
		}
		mu.Lock()
		defer mu.Unlock()
		st, ok := stores[role]
		if !ok {
			st = open(cfg)
			stores[role] = st
		}
		return st, nil
	}
}
