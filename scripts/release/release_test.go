// Package release dry-runs the release workflow (.github/workflows/release.yml): its run: steps,
// in its order, on a copy of this repository's release files, against a local OCI registry
// (go-containerregistry's) and the project's GitHub test server (internal/testutil/ghserver,
// which holds every request to GitHub's own description of its API), with a bare repository as
// origin. GoReleaser and cosign, which need Docker and Sigstore, are stand-ins that build
// archives, push an image over the registry API and sign, recording what they do; everything
// else is the real scripts. One timeline of what happened, from every party, shows the order.
package release

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/rhysd/actionlint"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
)

const token = "ghs_releasetoken"

// timeline is one file every party appends a line to: the test's servers and, through the
// environment, the stand-ins and the origin's hook.
type timeline struct {
	mu   sync.Mutex
	path string
}

func (tl *timeline) add(format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	f, err := os.OpenFile(tl.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", args...)
}

func (tl *timeline) lines(t *testing.T) []string {
	b, err := os.ReadFile(tl.path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// first is the index of the first line matching re, or -1.
func first(lines []string, re string) int {
	return slices.IndexFunc(lines, regexp.MustCompile(re).MatchString)
}

// The stand-ins: GoReleaser checks the local tag is on HEAD, builds archives and checksums.txt,
// pushes a one-layer image by the version tag over the registry API, and signs through cosign.
const fakeGoreleaser = `#!/usr/bin/env bash
set -euo pipefail
[ "$(git describe --exact-match --tags HEAD)" = "v$VERSION" ] || { echo "goreleaser: HEAD is not tagged v$VERSION" >&2; exit 1; }
rm -rf dist && mkdir dist
for p in linux_amd64 darwin_arm64 windows_amd64; do
  echo "cdkbot $VERSION $p" >dist/cdkbot && tar -czf "dist/cdkbot_${VERSION}_$p.tar.gz" -C dist cdkbot
done
rm dist/cdkbot
(cd dist && sha256sum -- *.tar.gz >checksums.txt && for f in *.tar.gz; do echo '{}' >"$f.sbom.json"; done)
echo "build: $(ls dist | tr '\n' ' ')" >>"$TIMELINE"
reg=$REGISTRY_URL/v2/${IMAGE#*/}
blob() {
  local d loc sep
  d=sha256:$(sha256sum "$1" | cut -d' ' -f1)
  loc=$(curl -fsS -X POST -D - -o /dev/null "$reg/blobs/uploads/" | tr -d '\r' | awk 'tolower($1) == "location:" { print $2 }')
  [[ "$loc" == http* ]] || loc=$REGISTRY_URL$loc
  sep='?'; [[ "$loc" == *\?* ]] && sep='&'
  curl -fsS -X PUT -H 'Content-Type: application/octet-stream' --data-binary "@$1" "$loc${sep}digest=$d" >/dev/null
  echo "$d"
}
tmp=$(mktemp -d)
echo "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]},\"nonce\":\"$RANDOM$RANDOM\"}" >"$tmp/config"
echo "layer $VERSION $RANDOM" | gzip >"$tmp/layer"
c=$(blob "$tmp/config") l=$(blob "$tmp/layer")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"%s","size":%d}]}' \
  "$c" "$(wc -c <"$tmp/config")" "$l" "$(wc -c <"$tmp/layer")" >"$tmp/manifest"
curl -fsS -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary "@$tmp/manifest" "$reg/manifests/v$VERSION" >/dev/null
digest=sha256:$(sha256sum "$tmp/manifest" | cut -d' ' -f1)
cosign sign-blob --yes --bundle=dist/checksums.txt.sigstore.json dist/checksums.txt
cosign sign --yes "$IMAGE@$digest"
`

const fakeCosign = `#!/usr/bin/env bash
set -euo pipefail
case $1 in
  sign-blob) echo '{"fake":"bundle"}' >"${3#--bundle=}"; echo "sign: blob ${4}" >>"$TIMELINE" ;;
  sign) echo "sign: image $3" >>"$TIMELINE" ;;
esac
`

// world is one dry run's parties.
type world struct {
	dir, work, origin, image string
	tl                       *timeline
	gh                       *ghserver.Server
	ghURL                    string
	registryURL              string
	env                      []string
	sha                      string
}

func newWorld(t *testing.T, version string) *world {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the release runs on Linux")
	}
	for _, tool := range []string{"bash", "git", "curl", "jq", "sha256sum", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	w := &world{dir: dir, work: filepath.Join(dir, "work"), origin: filepath.Join(dir, "origin.git"),
		tl: &timeline{path: filepath.Join(dir, "timeline")}}

	// The registry, recording the manifests pushed.
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	regSrv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			w.tl.add("registry: PUT manifest %s", r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
		}
		reg.ServeHTTP(rw, r)
	}))
	t.Cleanup(regSrv.Close)
	w.registryURL = regSrv.URL
	w.image = strings.TrimPrefix(regSrv.URL, "http://") + "/cdkbot/cdkbot"

	// GitHub, behind a recorder. Releases, their assets and workflow runs are answered by script
	// (ghserver models what the action uses); ghserver still holds each request to GitHub's
	// description: path, query and body.
	w.gh = ghserver.New(t, token)
	target, _ := url.Parse(w.gh.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	ghSrv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.tl.add("github: %s %s", r.Method, r.URL.RequestURI())
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(ghSrv.Close)
	w.ghURL = ghSrv.URL
	const rel = "/repos/cdkbot/cdkbot/releases"
	w.gh.Fail["GET "+rel+"/tags/v"+version] = []ghserver.Response{{Status: 404, Body: `{"message":"Not Found"}`}}
	w.gh.Fail["GET /repos/cdkbot/cdkbot/actions/workflows/ci.yml/runs"] = []ghserver.Response{
		{Status: 200, Body: `{"total_count":1,"workflow_runs":[{"id":1,"conclusion":"success"}]}`}}
	w.gh.Fail["POST "+rel] = []ghserver.Response{{Status: 201,
		Body: fmt.Sprintf(`{"id":7,"draft":true,"upload_url":"%s%s/7/assets{?name,label}"}`, ghSrv.URL, rel)}}
	for range 10 {
		w.gh.Fail["POST "+rel+"/7/assets"] = append(w.gh.Fail["POST "+rel+"/7/assets"], ghserver.Response{Status: 201, Body: `{}`})
	}
	w.gh.Fail["PATCH "+rel+"/7"] = []ghserver.Response{{Status: 200, Body: `{"id":7,"draft":false}`}}
	w.gh.Fail["DELETE "+rel+"/7"] = []ghserver.Response{{Status: 204}}

	// The repository: the release files of this checkout, pushed to a bare origin whose hook
	// records every ref it receives.
	root := filepath.Join("..", "..")
	for _, f := range []string{"action.yml", "setup/action.yml", "scripts/release.sh", "scripts/release-action.sh",
		".github/workflows/release.yml"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(w.work, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(w.work, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	changelog := "# Changelog\n\n## Unreleased\n\n## v" + version + " — 2026-11-26\n- The first release.\n\n## v0.0.1\n- old\n"
	os.WriteFile(filepath.Join(w.work, "CHANGELOG.md"), []byte(changelog), 0o644)
	os.WriteFile(filepath.Join(w.work, ".gitignore"), []byte("dist/\n"), 0o644)
	w.git(t, dir, "init", "-q", "--bare", "-b", "main", w.origin)
	hook := fmt.Sprintf("#!/bin/sh\nwhile read old new ref; do echo \"git: $ref $new\" >>%q; done\n", w.tl.path)
	os.WriteFile(filepath.Join(w.origin, "hooks", "post-receive"), []byte(hook), 0o755)
	w.git(t, w.work, "init", "-q", "-b", "main")
	w.git(t, w.work, "add", "-A")
	w.git(t, w.work, "-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "-qm", "main")
	w.git(t, w.work, "remote", "add", "origin", w.origin)
	w.git(t, w.work, "push", "-q", "origin", "main")
	w.sha = strings.TrimSpace(w.git(t, w.work, "rev-parse", "HEAD"))
	os.Truncate(w.tl.path, 0)

	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "goreleaser"), []byte(fakeGoreleaser), 0o755)
	os.WriteFile(filepath.Join(bin, "cosign"), []byte(fakeCosign), 0o755)
	runnerTemp := filepath.Join(dir, "runner-temp")
	os.MkdirAll(runnerTemp, 0o755)
	w.env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TIMELINE="+w.tl.path, "GITHUB_REF=refs/heads/main", "GITHUB_SHA="+w.sha, "GITHUB_REPOSITORY=cdkbot/cdkbot",
		"GITHUB_API_URL="+w.ghURL, "RUNNER_TEMP="+runnerTemp, "REGISTRY_URL="+w.registryURL,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	return w
}

func (w *world) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// runWorkflow runs the release job's run: steps in order as the runner would (bash -eo pipefail,
// the job's env with its expressions given values), skipping uses: steps (they install tools
// and log in) and, after a failure, every step but those under if: failure(). It returns the
// names of the steps that failed and the log.
func (w *world) runWorkflow(t *testing.T, version string, extraEnv ...string) (failed []string, log string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(w.work, ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	wf, errs := actionlint.Parse(src)
	if len(errs) > 0 {
		t.Fatalf("release.yml: %v", errs[0])
	}
	job := wf.Jobs["release"]
	if job == nil || job.If == nil || !strings.Contains(job.If.Value, "github.ref == 'refs/heads/main'") {
		t.Fatal("release.yml: the release job does not run only on main")
	}
	values := map[string]string{"inputs.version": version, "github.token": token, "github.repository": "cdkbot/cdkbot"}
	expr := regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)
	env := slices.Clone(w.env)
	for _, v := range job.Env.Vars {
		name := v.Name
		val := expr.ReplaceAllStringFunc(v.Value.Value, func(m string) string {
			k := expr.FindStringSubmatch(m)[1]
			s, ok := values[k]
			if !ok {
				t.Fatalf("release.yml: env %s uses ${{ %s }}, which this dry run gives no value", name.Value, k)
			}
			return s
		})
		env = append(env, name.Value+"="+val)
	}
	// The image goes to the local registry instead of ghcr.io.
	env = append(env, append([]string{"IMAGE=" + w.image}, extraEnv...)...)
	var out bytes.Buffer
	for i, st := range job.Steps {
		name := fmt.Sprintf("step %d", i+1)
		if st.Name != nil {
			name = st.Name.Value
		}
		onFailure := st.If != nil && strings.Contains(st.If.Value, "failure()")
		if (len(failed) > 0) != onFailure {
			continue
		}
		run, ok := st.Exec.(*actionlint.ExecRun)
		if !ok {
			continue
		}
		if expr.MatchString(run.Run.Value) {
			t.Errorf("release.yml: step %q puts an expression in its script: pass it through env", name)
		}
		fmt.Fprintf(&out, "== %s\n", name)
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", run.Run.Value)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = w.work, env, &out, &out
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(&out, "(%v)\n", err)
			failed = append(failed, name)
		}
	}
	return failed, out.String()
}

// originFile is a file of the origin at ref, "" when the ref does not exist.
func (w *world) originFile(t *testing.T, ref, path string) string {
	cmd := exec.Command("git", "--git-dir", w.origin, "show", ref+":"+path)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func (w *world) originRef(ref string) string {
	out, err := exec.Command("git", "--git-dir", w.origin, "rev-parse", "-q", "--verify", ref+"^{commit}").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// The order: build → push → sign → tag → publish, then vN; the tag's action.yml names the
// pushed image by digest and its setup action installs this release; main is untouched.
func TestReleaseDryRun(t *testing.T) {
	w := newWorld(t, "1.2.3")
	failed, out := w.runWorkflow(t, "1.2.3")
	if len(failed) > 0 {
		t.Fatalf("failed: %v\n%s", failed, out)
	}
	tl := w.tl.lines(t)
	order := []string{
		`^build: .*checksums\.txt`,
		`^registry: PUT manifest v1\.2\.3$`,
		`^sign: blob dist/checksums\.txt$`,
		`^sign: image ` + regexp.QuoteMeta(w.image) + `@sha256:`,
		`^git: refs/tags/v1\.2\.3 `,
		`^github: POST /repos/cdkbot/cdkbot/releases$`,
		`^github: POST /repos/cdkbot/cdkbot/releases/7/assets\?name=checksums\.txt\.sigstore\.json$`,
		`^github: PATCH /repos/cdkbot/cdkbot/releases/7$`,
		`^git: refs/tags/v1 `,
		`^registry: PUT manifest v1$`,
	}
	last := -1
	for _, re := range order {
		i := first(tl, re)
		if i < 0 || i < last {
			t.Fatalf("%q is missing or out of order in the timeline:\n%s\n\nlog:\n%s", re, strings.Join(tl, "\n"), out)
		}
		last = i
	}
	// Preflight asked whether CI passed at this very commit, before anything was built.
	if i := first(tl, `^github: GET /repos/cdkbot/cdkbot/actions/workflows/ci\.yml/runs\?head_sha=`+w.sha+`&status=success`); i < 0 ||
		i > first(tl, `^build:`) {
		t.Errorf("no CI check before the build:\n%s", strings.Join(tl, "\n"))
	}
	// The digest pin: the image the build pushed, by digest, in the tagged action.yml.
	signed := regexp.MustCompile(`sign: image (\S+)`).FindStringSubmatch(strings.Join(tl, "\n"))[1]
	action := w.originFile(t, "refs/tags/v1.2.3", "action.yml")
	if !strings.Contains(action, "\n  image: docker://"+signed+" # v1.2.3\n") {
		t.Errorf("the tag's action.yml does not name %s:\n%s", signed, action)
	}
	if setup := w.originFile(t, "refs/tags/v1.2.3", "setup/action.yml"); !strings.Contains(setup, `default: "1.2.3"`) {
		t.Errorf("the tag's setup action does not default to its release:\n%s", setup)
	}
	if main := w.originFile(t, "refs/heads/main", "action.yml"); !strings.Contains(main, "\n  image: Dockerfile\n") ||
		w.originRef("refs/heads/main") != w.sha {
		t.Error("main was changed: only the tag is pushed")
	}
	if w.originRef("refs/tags/v1") != w.originRef("refs/tags/v1.2.3") {
		t.Error("v1 does not point at the release")
	}
	if !strings.Contains(strings.Join(w.gh.Calls, "\n"), "PATCH /repos/cdkbot/cdkbot/releases/7") {
		t.Errorf("calls: %v", w.gh.Calls)
	}
	t.Logf("timeline:\n%s", strings.Join(tl, "\n"))
}

// A prerelease is published as one and moves no vN, neither the git tag nor the image tag.
func TestReleaseDryRunPrerelease(t *testing.T) {
	w := newWorld(t, "1.3.0-rc.1")
	if failed, out := w.runWorkflow(t, "1.3.0-rc.1"); len(failed) > 0 {
		t.Fatalf("failed: %v\n%s", failed, out)
	}
	tl := strings.Join(w.tl.lines(t), "\n")
	if w.originRef("refs/tags/v1.3.0-rc.1") == "" || w.originRef("refs/tags/v1") != "" ||
		strings.Contains(tl+"\n", "registry: PUT manifest v1\n") {
		t.Errorf("prerelease moved vN or was not tagged:\n%s", tl)
	}
}

// A failure after the tag (publishing refused) deletes the draft and the tag: nothing is half
// released, and a rerun starts clean.
func TestReleaseDryRunUndoesAFailedPublish(t *testing.T) {
	w := newWorld(t, "1.2.3")
	w.gh.Fail["PATCH /repos/cdkbot/cdkbot/releases/7"] = []ghserver.Response{{Status: 500, Body: `{"message":"boom"}`}}
	failed, out := w.runWorkflow(t, "1.2.3")
	if !slices.ContainsFunc(failed, func(s string) bool { return strings.HasPrefix(s, "Publish") }) {
		t.Fatalf("publish did not fail: %v\n%s", failed, out)
	}
	tl := strings.Join(w.tl.lines(t), "\n")
	if w.originRef("refs/tags/v1.2.3") != "" || !strings.Contains(tl, "github: DELETE /repos/cdkbot/cdkbot/releases/7") ||
		w.originRef("refs/tags/v1") != "" {
		t.Errorf("after a failed publish the tag or the draft remain:\n%s\n%s", tl, out)
	}
}

// Preflight refuses a run off main and a commit whose CI did not pass, before building anything.
func TestReleaseDryRunRefuses(t *testing.T) {
	w := newWorld(t, "1.2.3")
	failed, out := w.runWorkflow(t, "1.2.3", "GITHUB_REF=refs/heads/feature")
	if len(failed) == 0 || !strings.Contains(out, "releases are made from main") {
		t.Errorf("off main: %v\n%s", failed, out)
	}
	w = newWorld(t, "1.2.3")
	w.gh.Fail["GET /repos/cdkbot/cdkbot/actions/workflows/ci.yml/runs"] = []ghserver.Response{
		{Status: 200, Body: `{"total_count":0,"workflow_runs":[]}`}}
	failed, out = w.runWorkflow(t, "1.2.3")
	if len(failed) == 0 || !strings.Contains(out, "has not passed") {
		t.Errorf("CI not green: %v\n%s", failed, out)
	}
	for _, l := range w.tl.lines(t) {
		if strings.HasPrefix(l, "build:") || strings.HasPrefix(l, "git: refs/tags") {
			t.Errorf("refused, yet: %s", l)
		}
	}
}
