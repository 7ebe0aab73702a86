# cdkbot's GitHub Action image: the static Go binary, on a runtime that can synthesize CDK apps
# (node, npm, git and a shell; yarn and pnpm through corepack), with the docker CLI and its buildx
# plugin so image assets publish from the action (the runner's Docker daemon is reached through
# the socket GitHub mounts into Docker actions).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
ARG VERSION=0.0.0-dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/cdkbot/cdkbot/internal/cli.version=${VERSION}" \
      -o /out/cdkbot ./cmd/cdkbot

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && corepack enable \
 && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin cdkbot-base \
 && useradd --system --uid 10002 --user-group --no-create-home --shell /usr/sbin/nologin cdkbot-head \
 && git config --system --add safe.directory '*'
# Static binaries from the official images (the CLI only; no engine runs in the action).
COPY --from=docker:28-cli /usr/local/bin/docker /usr/local/bin/docker
COPY --from=docker/buildx-bin:0.19 /buildx /usr/libexec/docker/cli-plugins/docker-buildx
COPY --from=build /out/cdkbot /usr/local/bin/cdkbot
# cdkbot-base and cdkbot-head (input synth-user) install and synthesize the two revisions: neither
# can read the root-owned process, token or dependency cache of the action, nor touch the other's.
# No USER: GitHub runs Docker actions as the image's default user and documents that it must be
# root, or the action cannot write the workspace and the file commands (GITHUB_OUTPUT, summary).
ENTRYPOINT ["/usr/local/bin/cdkbot"]
