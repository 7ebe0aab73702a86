package publish

import (
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

func TestBuildArgsCoverEveryManifestOptionInAFixedOrder(t *testing.T) {
	src := assembly.DockerImageSource{
		DockerFile:          "Dockerfile.prod",
		DockerBuildArgs:     map[string]string{"B": "2", "A": "1"},
		DockerBuildSecrets:  map[string]string{"npm": "src=/run/npmrc"},
		DockerBuildContexts: map[string]string{"lib": "../lib"},
		DockerBuildSSH:      "default",
		DockerBuildTarget:   "runtime",
		Platform:            "linux/arm64",
		NetworkMode:         "host",
		DockerOutputs:       []string{"type=registry"},
		CacheFrom:           []assembly.DockerCacheOption{{Type: "registry", Params: map[string]string{"ref": "r:cache"}}},
		CacheTo:             &assembly.DockerCacheOption{Type: "inline"},
		CacheDisabled:       true,
	}
	got := strings.Join(buildArgs(src, "cdkasset-x", "/asm/asset.x"), " ")
	want := "build --tag cdkasset-x --file Dockerfile.prod --build-arg A=1 --build-arg B=2 --secret id=npm,src=/run/npmrc " +
		"--build-context lib=../lib --ssh default --target runtime --platform linux/arm64 --network host --output type=registry " +
		"--cache-from type=registry,ref=r:cache --cache-to type=inline --no-cache /asm/asset.x"
	if got != want {
		t.Errorf("docker build args:\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(buildArgs(assembly.DockerImageSource{}, "t", "d"), " "); got != "build --tag t d" {
		t.Errorf("minimal: %s", got)
	}
}
