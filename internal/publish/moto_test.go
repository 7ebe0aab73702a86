package publish_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/publish"
	"github.com/cdkbot/cdkbot/internal/publishplan"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// fixture is an assembly synthesized by real aws-cdk-lib for moto's account.
const fixture = "../../compat-fixtures/aws-cdk-lib@2.276.0/publish"

// filePlan plans the file assets of the fixture (image publishing is not built yet).
func filePlan(t *testing.T) *publishplan.Plan {
	t.Helper()
	a, err := assembly.Load(os.DirFS(fixture), fixture)
	if err != nil {
		t.Fatal(err)
	}
	all, err := publishplan.Build(a, publishplan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := &publishplan.Plan{}
	for _, j := range all.Jobs {
		if j.Kind == publishplan.File {
			p.Jobs = append(p.Jobs, j)
		}
	}
	if len(p.Jobs) != 4 {
		t.Fatalf("fixture has %d file assets, want 4 (3 assets and the template)", len(p.Jobs))
	}
	return p
}

// publishAt runs a publish through the standard configuration chain pointed at endpoint.
func publishAt(t *testing.T, ctx context.Context, p *publishplan.Plan, progress func(publish.Event)) (publish.Summary, error) {
	t.Helper()
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{MaxAttempts: 10})
	if err != nil {
		t.Fatal(err)
	}
	return publish.Run(ctx, p, publish.Options{Root: fixture, Files: publish.S3Stores(awsconfig.NewSessions(cfg, awsconfig.Options{})),
		Concurrency: 4, Progress: progress, TempDir: t.TempDir()})
}

func objects(t *testing.T, srv *moto.Server, bucket string) map[string][]byte {
	t.Helper()
	client := awsconfig.S3(srv.Config())
	out, err := client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, o := range out.Contents {
		obj, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: o.Key})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(obj.Body)
		obj.Body.Close()
		got[*o.Key] = b
	}
	return got
}

func TestPublishToBootstrappedMoto(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	proxy := srv.NewProxy(t)
	moto.Env(t, proxy.URL)
	p := filePlan(t)
	ctx := context.Background()

	s, err := publishAt(t, ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Count(publish.Published); got != 4 {
		t.Fatalf("published %d, want 4: %+v", got, s.Outcomes)
	}
	bucket := "cdk-hnb659fds-assets-123456789012-us-east-1"
	objs := objects(t, srv, bucket)
	if len(objs) != 4 {
		t.Fatalf("bucket holds %d objects, want 4: %v", len(objs), keys(objs))
	}
	for _, j := range p.Jobs {
		d := j.Destinations[0]
		if d.Bucket != bucket || !strings.Contains(d.AssumeRoleARN, "file-publishing-role") {
			t.Errorf("destination %+v", d)
		}
		body := objs[d.Key]
		if j.Packaging == "zip" {
			var want bytes.Buffer
			if _, err := publish.Zip(&want, fixture, filepath.Join(fixture, j.SourcePath)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, want.Bytes()) {
				t.Errorf("%s: uploaded zip differs from a fresh deterministic zip", d.Key)
			}
			zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
			if err != nil {
				t.Fatalf("%s: %v", d.Key, err)
			}
			var names []string
			for _, f := range zr.File {
				names = append(names, f.Name)
			}
			if strings.Join(names, " ") != "css/ css/site.css index.html js/ js/app.js" {
				t.Errorf("zip entries: %v", names)
			}
			continue
		}
		want, err := os.ReadFile(filepath.Join(fixture, j.SourcePath))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(body, want) {
			t.Errorf("%s: %d bytes uploaded, file has %d", d.Key, len(body), len(want))
		}
	}
	head, err := awsconfig.S3(srv.Config()).HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &p.Jobs[0].Destinations[0].Key})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(head.ContentType) == "" || head.ServerSideEncryption != "aws:kms" {
		t.Errorf("object metadata: content type %q, encryption %q (the bootstrap bucket is KMS-encrypted)", aws.ToString(head.ContentType), head.ServerSideEncryption)
	}

	// A second run finds everything present and uploads nothing.
	before := len(proxy.Calls)
	s, err = publishAt(t, ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Count(publish.Present); got != 4 {
		t.Errorf("second run: %d present, want 4: %+v", got, s.Outcomes)
	}
	for _, c := range proxy.Calls[before:] {
		if strings.HasPrefix(c, "PUT ") || strings.HasPrefix(c, "POST /"+bucket) {
			t.Errorf("second run wrote: %s", c)
		}
	}
}

func TestPublishInterruptedThenResumed(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	p := filePlan(t)

	// Cancel the run as soon as the first object is published, as a killed job would stop.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p1 := &publishplan.Plan{Jobs: p.Jobs}
	s, err := func() (publish.Summary, error) {
		cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return publish.Run(ctx, p1, publish.Options{Root: fixture, Files: publish.S3Stores(awsconfig.NewSessions(cfg, awsconfig.Options{})),
			Concurrency: 1, TempDir: t.TempDir(), Progress: func(e publish.Event) {
				if e.State == publish.Published {
					cancel()
				}
			}})
	}()
	if err == nil {
		t.Fatal("the interrupted run reported success")
	}
	first := s.Count(publish.Published)
	if first == 0 || first == 4 {
		t.Fatalf("interrupted run published %d of 4", first)
	}

	s, err = publishAt(t, context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Count(publish.Present) != first || s.Count(publish.Published) != 4-first {
		t.Errorf("resumed run: %d present, %d published; want %d and %d", s.Count(publish.Present), s.Count(publish.Published), first, 4-first)
	}
	objs := objects(t, srv, "cdk-hnb659fds-assets-123456789012-us-east-1")
	if len(objs) != 4 {
		t.Errorf("bucket holds %v, want the 4 assets once each", keys(objs))
	}
}

func TestPublishSurvivesThrottlingAndServerErrors(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	proxy := srv.NewProxy(t)
	// Every third request fails, alternating throttling and an internal error.
	proxy.Fault = func(r *http.Request, body []byte, n int) *moto.Fault {
		switch n % 6 {
		case 2:
			return &moto.Fault{Status: http.StatusServiceUnavailable, Code: "SlowDown", Message: "Please reduce your request rate."}
		case 5:
			return &moto.Fault{Status: http.StatusInternalServerError, Code: "InternalError", Message: "We encountered an internal error."}
		}
		return nil
	}
	moto.Env(t, proxy.URL)
	s, err := publishAt(t, context.Background(), filePlan(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests, %d faults injected", len(proxy.Calls), proxy.Faults)
	if s.Count(publish.Published) != 4 || proxy.Faults < 3 {
		t.Errorf("published %d with %d injected faults", s.Count(publish.Published), proxy.Faults)
	}
	if objs := objects(t, srv, "cdk-hnb659fds-assets-123456789012-us-east-1"); len(objs) != 4 {
		t.Errorf("bucket holds %v", keys(objs))
	}
}

func TestPublishWrongRoleNamesAssetAndDestination(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	proxy := srv.NewProxy(t)
	// moto does not enforce IAM, so the proxy answers STS the way AWS does for a role the
	// caller may not assume.
	proxy.Fault = func(r *http.Request, body []byte, n int) *moto.Fault {
		if bytes.Contains(body, []byte("Action=AssumeRole")) && bytes.Contains(body, []byte("no-such-role")) {
			return &moto.Fault{Status: http.StatusForbidden, Code: "AccessDenied", Message: "User is not authorized to perform: sts:AssumeRole"}
		}
		return nil
	}
	moto.Env(t, proxy.URL)
	p := filePlan(t)
	p.Jobs = p.Jobs[:1]
	p.Jobs[0].Destinations[0].AssumeRoleARN = "arn:aws:iam::123456789012:role/no-such-role"
	s, err := publishAt(t, context.Background(), p, nil)
	if err == nil {
		t.Fatal("publishing through a role that cannot be assumed succeeded")
	}
	for _, want := range []string{p.Jobs[0].ID, "s3://cdk-hnb659fds-assets-123456789012-us-east-1/", "no-such-role", "AccessDenied", "cdk bootstrap"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q:\n%v", want, err)
		}
	}
	if s.Count(publish.Failed) != 1 {
		t.Errorf("outcomes: %+v", s.Outcomes)
	}
	for _, c := range proxy.Calls {
		if strings.HasPrefix(c, "PUT ") {
			t.Errorf("uploaded despite the role failure: %s", c)
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A multipart upload a killed run left unfinished (SIGKILL cannot abort it) is aborted by the
// next run that uploads the same key, and the summary says so: no hidden, billed parts pile up.
func TestLeftoverMultipartUploadsAreAbortedAndReported(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	ctx := context.Background()
	p := filePlan(t)
	d := p.Jobs[0].Destinations[0]
	client := awsconfig.S3(srv.Config())
	if _, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(d.Bucket), Key: aws.String(d.Key)}); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		out, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(d.Bucket)})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Uploads)
	}
	if count() != 1 {
		t.Fatal("the emulator does not list the leftover upload")
	}
	s, err := publishAt(t, ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("%d unfinished multipart uploads left", n)
	}
	notes := 0
	for _, o := range s.Outcomes {
		if o.Note != "" {
			notes++
			if o.Asset != p.Jobs[0].ID || o.Note != "aborted 1 unfinished upload(s) an earlier run left" {
				t.Errorf("note on %s: %q", o.Asset, o.Note)
			}
		}
	}
	if notes != 1 {
		t.Errorf("%d notes, want 1: %+v", notes, s.Outcomes)
	}
}
