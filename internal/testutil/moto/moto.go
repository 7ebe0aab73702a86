// Package moto runs the real AWS emulator (Python moto 5.x) for integration tests, through the
// project's launcher (launcher.py), which closes moto's CloudFormation gaps the way real
// CloudFormation behaves (README.md lists them): started on a free loopback port per test,
// optionally with the real CDK bootstrap template deployed into it through the CloudFormation
// API, and a fault-injecting proxy in front of it.
// Tests point aws-sdk-go-v2 at it through AWS_ENDPOINT_URL; no real AWS endpoint is ever used.
package moto

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
)

// Account and Region moto answers as.
const (
	Account = "123456789012"
	Region  = "us-east-1"
)

//go:embed bootstrap-template.yaml
var bootstrapTemplate string

// Server is a running moto_server.
type Server struct {
	URL string
}

// Start runs the launcher on a free loopback port until the test ends. The Python interpreter
// comes from scripts/moto-server.sh (python3 with moto, or a cache virtualenv it installs once).
func Start(t testing.TB) *Server {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the AWS emulator harness (moto_server) runs on Linux and macOS")
	}
	py := motoPython(t)
	port := freePort(t)
	cmd := exec.Command(py, filepath.Join(repoRoot(), "internal", "testutil", "moto", "launcher.py"),
		"-H", "127.0.0.1", "-p", port)
	ownGroup(cmd)
	logf, err := os.Create(filepath.Join(t.TempDir(), "moto.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start moto_server: %v", err)
	}
	t.Cleanup(func() {
		killGroup(cmd)
		_ = cmd.Wait()
		logf.Close()
	})
	s := &Server{URL: "http://127.0.0.1:" + port}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.URL + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("moto_server did not answer on %s within 60s: %v\n%s", s.URL, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func motoPython(t testing.TB) string {
	binOnce.Do(func() {
		script := filepath.Join(repoRoot(), "scripts", "moto-server.sh")
		out, err := exec.Command("bash", script).Output()
		if err != nil {
			binErr = fmt.Errorf("%s: %w", script, err)
			return
		}
		binPath = strings.TrimSpace(string(out))
	})
	if binErr != nil {
		t.Fatalf("find or install moto: %v", binErr)
	}
	return binPath
}

func repoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// Env points the standard AWS configuration chain at endpoint (the server or a proxy in front
// of it) for the rest of the test, with fixed test credentials and nothing read from the
// machine's own AWS configuration.
func Env(t *testing.T, endpoint string) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL":            endpoint,
		"AWS_ACCESS_KEY_ID":           "testing",
		"AWS_SECRET_ACCESS_KEY":       "testing",
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  Region,
		"AWS_DEFAULT_REGION":          Region,
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
}

// Config is a client configuration for the server with test credentials.
func (s *Server) Config() aws.Config {
	return aws.Config{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider("testing", "testing", ""),
		BaseEndpoint: aws.String(s.URL),
	}
}

// Bootstrap deploys the real CDK bootstrap template (bootstrap-template.version names the
// aws-cdk release it comes from) as the CDKToolkit stack: the asset bucket, container
// repository, publishing/deploy/execution roles and the version parameter, as in AWS.
func (s *Server) Bootstrap(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfn := cloudformation.NewFromConfig(s.Config())
	_, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{
		StackName:    aws.String("CDKToolkit"),
		TemplateBody: aws.String(bootstrapTemplate),
		Capabilities: []cfntypes.Capability{cfntypes.CapabilityCapabilityNamedIam},
	})
	if err != nil {
		t.Fatalf("deploy the bootstrap template into moto: %v", err)
	}
	for {
		out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String("CDKToolkit")})
		if err != nil {
			t.Fatalf("describe CDKToolkit: %v", err)
		}
		switch st := string(out.Stacks[0].StackStatus); {
		case st == "CREATE_COMPLETE":
			return
		case strings.HasSuffix(st, "_FAILED") || strings.Contains(st, "ROLLBACK"):
			t.Fatalf("bootstrap stack %s: %s", st, aws.ToString(out.Stacks[0].StackStatusReason))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Proxy is a reverse proxy in front of the server that can fail chosen requests, to exercise
// retries; it logs every request it sees.
type Proxy struct {
	URL string
	mu  sync.Mutex
	// Fault, when set, decides how to answer request number n (from 0) instead of forwarding
	// it; nil forwards. It is called under the proxy's lock with the body readable.
	Fault  func(r *http.Request, body []byte, n int) *Fault
	Calls  []string // "METHOD path[ Action] status", Action for query and JSON protocols
	Faults int
	// Rewrite, when set, may change a forwarded response's body: a stand-in for what moto does
	// not emulate (stack outputs of change-set stacks, stacks busy with another operation,
	// resource failure events). action is the operation name; it is called under the lock.
	Rewrite func(action string, body []byte) []byte
}

type actionKey struct{}

// Fault is an injected error response, written in the protocol of the request (query-protocol
// services such as STS wrap it in ErrorResponse; S3 does not).
type Fault struct {
	Status  int
	Code    string
	Message string
}

// NewProxy starts a proxy in front of s for the rest of the test.
func (s *Server) NewProxy(t testing.TB) *Proxy {
	target, _ := url.Parse(s.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &Proxy{}
	rp.ModifyResponse = func(resp *http.Response) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.Rewrite == nil {
			return nil
		}
		act, _ := resp.Request.Context().Value(actionKey{}).(string)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = p.Rewrite(strings.TrimSpace(act), body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.mu.Lock()
		var f *Fault
		if p.Fault != nil {
			f = p.Fault(r, body, len(p.Calls))
		}
		status := 0
		if f != nil {
			status = f.Status
			p.Faults++
		}
		p.Calls = append(p.Calls, fmt.Sprintf("%s %s%s %d", r.Method, r.URL.Path, action(r, body), status))
		p.mu.Unlock()
		if f == nil {
			rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), actionKey{}, action(r, body))))
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(f.Status)
		inner := fmt.Sprintf("<Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error>", f.Code, f.Message)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			fmt.Fprintf(w, "<ErrorResponse>%s<RequestId>fault</RequestId></ErrorResponse>", inner)
			return
		}
		fmt.Fprint(w, inner)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// action names the operation of a query-protocol (Action=...) or JSON-protocol (X-Amz-Target)
// request, with a leading space; "" for REST requests, whose path says enough.
func action(r *http.Request, body []byte) string {
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		if _, op, ok := strings.Cut(t, "."); ok {
			return " " + op
		}
		return " " + t
	}
	if q, err := url.ParseQuery(string(body)); err == nil && q.Get("Action") != "" {
		return " " + q.Get("Action")
	}
	return ""
}
