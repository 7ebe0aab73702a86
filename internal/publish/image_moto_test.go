package publish_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/publish"
	"github.com/cdkbot/cdkbot/internal/publishplan"
	"github.com/cdkbot/cdkbot/internal/testutil/fakedocker"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

func TestPublishImageAndFilesToBootstrappedMoto(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	calls := fakedocker.Install(t)
	a, err := assembly.Load(os.DirFS(fixture), fixture)
	if err != nil {
		t.Fatal(err)
	}
	p, err := publishplan.Build(a, publishplan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runOnce := func() publish.Summary {
		sessions := awsconfig.NewSessions(cfg, awsconfig.Options{})
		s, err := publish.Run(ctx, p, publish.Options{Root: fixture, Files: publish.S3Stores(sessions), Images: publish.ECRStores(sessions),
			Docker: publish.DockerCLI{}, TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := runOnce()
	if s.Count(publish.Published) != 5 {
		t.Fatalf("outcomes %+v", s.Outcomes)
	}
	log, _ := os.ReadFile(calls)
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	repo := "123456789012.dkr.ecr.us-east-1.amazonaws.com/cdk-hnb659fds-container-assets-123456789012-us-east-1"
	tag := "73b0e49e8cb91cf98a991860d150a61c38269765f5e57f24c1ccf5ed49aa850e"
	dir, _ := filepath.EvalSymlinks(filepath.Join(fixture, "asset."+tag))
	want := []string{
		"build --tag cdkasset-" + tag + " --build-arg GREETING=published " + dir + "|stdin=0",
		"login --username AWS --password-stdin 123456789012.dkr.ecr.us-east-1.amazonaws.com|stdin=",
		"tag cdkasset-" + tag + " " + repo + ":" + tag + "|stdin=0",
		"push " + repo + ":" + tag + "|stdin=0",
	}
	if len(lines) != len(want) {
		t.Fatalf("docker calls:\n%s", log)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("docker call %d:\n got %s\nwant %s", i, lines[i], w)
		}
	}
	if strings.HasSuffix(lines[1], "stdin=0") {
		t.Error("docker login got no password on stdin")
	}

	// Once the image is in the repository (the fake push does not put it there), a re-run
	// finds everything present and runs no docker command.
	_, err = ecr.NewFromConfig(srv.Config()).PutImage(ctx, &ecr.PutImageInput{
		RepositoryName: aws.String("cdk-hnb659fds-container-assets-123456789012-us-east-1"), ImageTag: aws.String(tag),
		ImageManifest: aws.String(`{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{"mediaType":"application/vnd.docker.container.image.v1+json","size":2,"digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},"layers":[]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	s = runOnce()
	if s.Count(publish.Present) != 5 {
		t.Errorf("second run: %+v", s.Outcomes)
	}
	if after, _ := os.ReadFile(calls); len(after) != len(log) {
		t.Errorf("second run ran docker:\n%s", after[len(log):])
	}
}
