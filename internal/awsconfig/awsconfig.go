// Package awsconfig loads AWS configuration the way the AWS CLI and CDK CLI do (environment,
// shared config, AWS_ENDPOINT_URL) and hands out one cached session per role to assume, so
// publishing and deploying talk to each destination with that destination's role only.
package awsconfig

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

// Options tune loading.
type Options struct {
	// Region overrides the configured region (AWS_REGION, profile).
	Region string
	// MaxAttempts per request, including the first; throttling and 5xx are retried with
	// jittered exponential backoff. Zero means 8.
	MaxAttempts int
	// SessionName names assumed-role sessions in CloudTrail. Zero means "cdkbot".
	SessionName string
	// ConnectTimeout and ResponseTimeout bound every request: connecting, and waiting for the
	// answer's headers once the request (with its body) is sent, so an endpoint that never
	// answers fails the request instead of hanging it. Zero means 10 s and 2 min.
	ConnectTimeout, ResponseTimeout time.Duration
}

// Load reads the standard AWS configuration chain. Credentials are resolved lazily, on the
// first request, so loading never fails for lack of them.
func Load(ctx context.Context, o Options) (aws.Config, error) {
	attempts := o.MaxAttempts
	if attempts == 0 {
		attempts = 8
	}
	connect, response := o.ConnectTimeout, o.ResponseTimeout
	if connect == 0 {
		connect = 10 * time.Second
	}
	if response == 0 {
		response = 2 * time.Minute
	}
	client := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = connect }).
		WithTransportOptions(func(t *http.Transport) {
			t.TLSHandshakeTimeout = connect
			t.ResponseHeaderTimeout = response
		})
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(client),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = attempts
				so.MaxBackoff = 20 * time.Second
			})
		}),
	}
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	return cfg, nil
}

// CustomEndpoint reports whether requests go to an endpoint other than AWS's (AWS_ENDPOINT_URL,
// an emulator): S3 then needs path-style addressing, as bucket subdomains do not resolve.
func CustomEndpoint(cfg aws.Config) bool {
	return cfg.BaseEndpoint != nil && *cfg.BaseEndpoint != ""
}

// S3 returns an S3 client for cfg, path-style on a custom endpoint.
func S3(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if CustomEndpoint(cfg) {
			o.UsePathStyle = true
		}
	})
}

// Identity is who the base credentials are.
type Identity struct {
	Account   string
	Partition string
	ARN       string
}

// WhoAmI asks STS who the credentials in cfg belong to; it is how environment-agnostic stacks
// get their account.
func WhoAmI(ctx context.Context, cfg aws.Config) (Identity, error) {
	out, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return Identity{}, fmt.Errorf("find the AWS account of the current credentials "+
			"(set AWS_PROFILE or AWS_ACCESS_KEY_ID, or give stacks an explicit env): %w", err)
	}
	id := Identity{Account: aws.ToString(out.Account), ARN: aws.ToString(out.Arn), Partition: "aws"}
	if parts := strings.SplitN(id.ARN, ":", 3); len(parts) == 3 && parts[0] == "arn" {
		id.Partition = parts[1]
	}
	return id, nil
}

// Role is a role to act as in a region; an empty ARN means the base credentials.
type Role struct {
	ARN        string
	ExternalID string
	Region     string
}

func (r Role) String() string {
	if r.ARN == "" {
		return "current credentials in " + r.Region
	}
	return r.ARN + " in " + r.Region
}

// Sessions hands out one configuration per Role. Assumed credentials are cached and refreshed
// before they expire by the SDK's credential cache; a role is assumed once however many
// assets go through it.
type Sessions struct {
	base aws.Config
	name string
	mu   sync.Mutex
	byID map[Role]*session
}

type session struct {
	once sync.Once
	cfg  aws.Config
	err  error
}

// NewSessions starts a session cache over base.
func NewSessions(base aws.Config, o Options) *Sessions {
	name := o.SessionName
	if name == "" {
		name = "cdkbot"
	}
	return &Sessions{base: base, name: name, byID: map[Role]*session{}}
}

// For returns the configuration acting as r, assuming the role on first use so that a role
// that cannot be assumed fails here, with its ARN, rather than deep inside an upload.
func (s *Sessions) For(ctx context.Context, r Role) (aws.Config, error) {
	s.mu.Lock()
	sess, ok := s.byID[r]
	if !ok {
		sess = &session{}
		s.byID[r] = sess
	}
	s.mu.Unlock()
	sess.once.Do(func() { sess.cfg, sess.err = s.open(ctx, r) })
	return sess.cfg, sess.err
}

func (s *Sessions) open(ctx context.Context, r Role) (aws.Config, error) {
	cfg := s.base.Copy()
	if r.Region != "" {
		cfg.Region = r.Region
	}
	if r.ARN == "" {
		return cfg, nil
	}
	provider := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), r.ARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = s.name
		if r.ExternalID != "" {
			o.ExternalID = aws.String(r.ExternalID)
		}
	})
	cfg.Credentials = aws.NewCredentialsCache(provider)
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return aws.Config{}, fmt.Errorf("assume role %s: %s", r.ARN, Explain(err))
	}
	return cfg, nil
}

// Explain shortens an SDK error to its service code and message, the part a user acts on,
// with a hint for the usual causes.
func Explain(err error) string {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return err.Error()
	}
	msg := api.ErrorCode() + ": " + api.ErrorMessage()
	switch api.ErrorCode() {
	case "AccessDenied", "AccessDeniedException", "InvalidClientTokenId", "ExpiredToken":
		msg += " (check that the environment is bootstrapped with `cdk bootstrap` " +
			"and that the current credentials may assume its roles)"
	}
	return msg
}
