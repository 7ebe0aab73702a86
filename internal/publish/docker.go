package publish

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

// Docker runs the docker CLI. The real one runs the `docker` on PATH (or $CDK_DOCKER, as the
// CDK CLI honours); tests put a recording fake there, so the code path is the users'.
type Docker interface {
	Run(ctx context.Context, args []string, stdin io.Reader) error
}

// DockerCLI is the docker executable.
type DockerCLI struct {
	// Output receives the build's output; nil discards it (it is kept for errors).
	Output io.Writer
}

// Run implements Docker. A failure carries the tail of the command's output.
func (d DockerCLI) Run(ctx context.Context, args []string, stdin io.Reader) error {
	bin := os.Getenv("CDK_DOCKER")
	if bin == "" {
		bin = "docker"
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = stdin
	var tail bytes.Buffer
	out := io.Writer(&tail)
	if d.Output != nil {
		out = io.MultiWriter(&tail, d.Output)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(tail.String())
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		if msg != "" {
			msg = ":\n" + msg
		}
		return fmt.Errorf("docker %s: %w%s", args[0], err, msg)
	}
	return nil
}

// buildArgs is the `docker build` command line of an image source, in a fixed order so the
// same manifest always runs the same command. contextDir is the build context on disk.
func buildArgs(src assembly.DockerImageSource, localTag, contextDir string) []string {
	args := []string{"build", "--tag", localTag}
	if src.DockerFile != "" {
		args = append(args, "--file", src.DockerFile)
	}
	for _, k := range slices.Sorted(maps.Keys(src.DockerBuildArgs)) {
		args = append(args, "--build-arg", k+"="+src.DockerBuildArgs[k])
	}
	for _, k := range slices.Sorted(maps.Keys(src.DockerBuildSecrets)) {
		args = append(args, "--secret", "id="+k+","+src.DockerBuildSecrets[k])
	}
	for _, k := range slices.Sorted(maps.Keys(src.DockerBuildContexts)) {
		args = append(args, "--build-context", k+"="+src.DockerBuildContexts[k])
	}
	if src.DockerBuildSSH != "" {
		args = append(args, "--ssh", src.DockerBuildSSH)
	}
	if src.DockerBuildTarget != "" {
		args = append(args, "--target", src.DockerBuildTarget)
	}
	if src.Platform != "" {
		args = append(args, "--platform", src.Platform)
	}
	if src.NetworkMode != "" {
		args = append(args, "--network", src.NetworkMode)
	}
	for _, o := range src.DockerOutputs {
		args = append(args, "--output", o)
	}
	for _, c := range src.CacheFrom {
		args = append(args, "--cache-from", cacheOption(c))
	}
	if src.CacheTo != nil {
		args = append(args, "--cache-to", cacheOption(*src.CacheTo))
	}
	if src.CacheDisabled {
		args = append(args, "--no-cache")
	}
	return append(args, contextDir)
}

func cacheOption(c assembly.DockerCacheOption) string {
	parts := []string{"type=" + c.Type}
	for _, k := range slices.Sorted(maps.Keys(c.Params)) {
		parts = append(parts, k+"="+c.Params[k])
	}
	return strings.Join(parts, ",")
}
