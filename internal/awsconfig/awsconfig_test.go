package awsconfig

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

func TestSessionsAssumeEachRoleOnce(t *testing.T) {
	srv := moto.Start(t)
	proxy := srv.NewProxy(t)
	moto.Env(t, proxy.URL)
	ctx := context.Background()
	cfg, err := Load(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !CustomEndpoint(cfg) {
		t.Fatal("AWS_ENDPOINT_URL not picked up")
	}
	id, err := WhoAmI(ctx, cfg)
	if err != nil || id.Account != moto.Account || id.Partition != "aws" {
		t.Fatalf("WhoAmI = %+v, %v", id, err)
	}
	s := NewSessions(cfg, Options{})
	role := Role{ARN: "arn:aws:iam::123456789012:role/publisher", ExternalID: "ext-1", Region: "eu-west-1"}
	for i := 0; i < 5; i++ {
		c, err := s.For(ctx, role)
		if err != nil {
			t.Fatal(err)
		}
		if c.Region != "eu-west-1" {
			t.Errorf("region %q", c.Region)
		}
		creds, err := c.Credentials.Retrieve(ctx)
		if err != nil || creds.AccessKeyID == "testing" {
			t.Errorf("credentials %+v, %v: want the assumed role's, not the base", creds.AccessKeyID, err)
		}
	}
	if _, err := s.For(ctx, Role{Region: "us-east-1"}); err != nil {
		t.Fatal(err)
	}
	assumes := 0
	for _, c := range proxy.Calls {
		if strings.HasPrefix(c, "POST / ") {
			assumes++
		}
	}
	// One GetCallerIdentity and one AssumeRole: five uses of the role, one session.
	if assumes != 2 {
		t.Errorf("STS calls: %d, want 2 (%v)", assumes, proxy.Calls)
	}
}

// An endpoint that accepts connections and never answers fails the request within the response
// timeout (each attempt), instead of hanging publish or deploy forever.
func TestUnansweredRequestsTimeOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	moto.Env(t, "http://"+l.Addr().String())
	cfg, err := Load(context.Background(), Options{MaxAttempts: 2, ResponseTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = WhoAmI(context.Background(), cfg)
	if err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("err %v after %s", err, time.Since(start))
	}
}
