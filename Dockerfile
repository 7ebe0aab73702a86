# cdkbot's GitHub Action image: the static Go binary, on a runtime that can synthesize CDK apps
# (node, npm, git and a shell; yarn and pnpm through corepack).
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
 && git config --system --add safe.directory '*'
COPY --from=build /out/cdkbot /usr/local/bin/cdkbot
# No USER: GitHub runs Docker actions as the image's default user and documents that it must be
# root, or the action cannot write the workspace and the file commands (GITHUB_OUTPUT, summary).
ENTRYPOINT ["/usr/local/bin/cdkbot"]
