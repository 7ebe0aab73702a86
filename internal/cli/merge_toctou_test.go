package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/cdkbot/cdkbot/internal/testutil/moto"
)

// what deploys is read from disk again at each stack's deploy, after the comparison.
// Base's docker image asset has dockerOutputs type=local,dest=<the assembly>: its build (just
// before Base deploys, after the comparison) writes App.template.json. The fake docker plays
// buildkit's local exporter.
func TestMergeDeployIsNotRewrittenByAnAssetBuild(t *testing.T) {
	srv := moto.Start(t)
	srv.Bootstrap(t)
	moto.Env(t, srv.URL)
	dir := writeBoundAssembly(t)
	if err := os.MkdirAll(filepath.Join(dir, "img"), 0o755); err != nil {
		t.Fatal(err)
	}
	evil, _ := jsonBytes(evilTemplate)
	for name, body := range map[string][]byte{"Dockerfile": []byte("FROM scratch\nCOPY App.template.json /\n"),
		"App.template.json": evil} {
		if err := os.WriteFile(filepath.Join(dir, "img", name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeJSONFile(t, filepath.Join(dir, "Base.assets.json"), map[string]any{"version": "36.0.0", "dockerImages": map[string]any{
		"img1": map[string]any{"source": map[string]any{"directory": "img", "dockerOutputs": []string{"type=local,dest=" + dir}},
			"destinations": map[string]any{"123456789012-us-east-1": map[string]any{
				"repositoryName": "cdk-hnb659fds-container-assets-123456789012-us-east-1", "imageTag": "img1", "region": "us-east-1",
				"assumeRoleArn": "arn:${AWS::Partition}:iam::123456789012:role/cdk-hnb659fds-image-publishing-role-123456789012-us-east-1"}}}}})
	editManifest(t, dir, func(arts map[string]any) {
		arts["Base.assets"] = map[string]any{"type": "cdk:asset-manifest", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"file": "Base.assets.json"}}
		arts["Base"].(map[string]any)["dependencies"] = []string{"Base.assets"}
	})
	bin := t.TempDir()
	script := `#!/bin/sh
cat >/dev/null
if [ "$1" = build ]; then
  for a in "$@"; do case "$a" in type=local,dest=*) d="${a#type=local,dest=}"; cp "` + dir + `/img/App.template.json" "$d/App.template.json";; esac; done
fi
exit 0
`
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CDK_DOCKER", filepath.Join(bin, "docker"))

	mergedWithReview(t, dir, reviewMarker(t, dir, "h7"))
	t.Setenv("INPUT_ON-UNREVIEWED", "refuse")
	code, stdout, stderr := run(t, "action")
	if code == ExitOK || !strings.Contains(stdout+stderr, "its build writes to the disk") {
		t.Errorf("an asset build that writes into the assembly was not refused: exit %d\n%s\n%s", code, stdout, stderr)
	}
	_, err := cloudformation.NewFromConfig(srv.Config()).DescribeStacks(context.Background(),
		&cloudformation.DescribeStacksInput{StackName: ptr("App")})
	if err == nil {
		t.Errorf("App was deployed")
	}
}
