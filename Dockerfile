# cdkbot's GitHub Action image: a static Go binary on a minimal non-root base.
# (The PR-review release adds git and node to the runtime stage for synthesis.)
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

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/cdkbot /usr/local/bin/cdkbot
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/cdkbot"]
