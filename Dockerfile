# syntax=docker/dockerfile:1
# cdkbot's GitHub Action image: the static Go binary on a runtime that synthesizes CDK apps in
# JavaScript/TypeScript (Node 24 LTS; npm, and yarn and pnpm through corepack) and Python (python3
# with venv and pip), with git and the docker CLI and its buildx plugin so image assets publish
# from the action (the runner's Docker daemon is reached through the socket GitHub mounts into
# Docker actions). Java, Go and .NET apps use the setup action in a job with their toolchain.
#
# Two ways to get the binary: built here from source (the default: `uses: ./`, the dogfood
# workflow) or handed in by the release (goreleaser: --build-arg CDKBOT_BINARY=prebuilt, one
# binary per platform in the context). Base images are pinned by digest; Dependabot's docker
# ecosystem proposes new ones.
ARG CDKBOT_BINARY=source

FROM --platform=$BUILDPLATFORM golang:1.26-bookworm@sha256:b305420a68d0f229d91eb3b3ed9e519fcf2cf5461da4bef997bf927e8c0bfd2b AS source
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
ARG VERSION=0.0.0-dev TARGETOS TARGETARCH
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -X github.com/cdkbot/cdkbot/internal/cli.version=${VERSION}" \
      -o /cdkbot ./cmd/cdkbot

FROM scratch AS prebuilt
ARG TARGETPLATFORM
COPY ${TARGETPLATFORM}/cdkbot /cdkbot

FROM ${CDKBOT_BINARY} AS binary

FROM docker:28-cli@sha256:625d9431a9f54c5a2bc90f24f0e1c3d55b1349fd857dd85035f98c2c9acbdd4d AS docker-cli
FROM docker/buildx-bin:0.20.1@sha256:ead27bfcde6308a757b4a5a4a931937363c1fa0091f7e2994b9114521853cf69 AS buildx

FROM node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates python3 python3-venv \
 && rm -rf /var/lib/apt/lists/* \
 && corepack enable \
 && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin cdkbot-base \
 && useradd --system --uid 10002 --user-group --no-create-home --shell /usr/sbin/nologin cdkbot-head \
 && git config --system --add safe.directory '*'
COPY --from=docker-cli /usr/local/bin/docker /usr/local/bin/docker
COPY --from=buildx /buildx /usr/libexec/docker/cli-plugins/docker-buildx
COPY --from=binary /cdkbot /usr/local/bin/cdkbot
# The licence, and the notice naming the AWS data cdkbot embeds (in the release's build context
# through .goreleaser.yaml's extra_files).
COPY LICENSE NOTICE /usr/share/doc/cdkbot/
# cdkbot-base and cdkbot-head (input synth-user) install and synthesize the two revisions: neither
# can read the root-owned process, token or dependency cache of the action, nor touch the other's.
# No USER: GitHub runs Docker actions as the image's default user and documents that it must be
# root, or the action cannot write the workspace and the file commands (GITHUB_OUTPUT, summary).
ENTRYPOINT ["/usr/local/bin/cdkbot"]
