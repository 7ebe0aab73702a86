// Package workflowlint lints the workflows users copy from README.md and the project's own
// (.github/workflows) with actionlint, pinned in go.mod, as a library: every ```yaml block of the
// README that is a workflow or a run of steps must parse, pass actionlint, declare its
// permissions and use the Node 24 majors of the actions it names. `go test ./scripts/workflowlint`
// (in .ci/run with every other test).
package workflowlint

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// node24 is the first major of each action that runs on Node 24 (Node 20 actions are deprecated
// on GitHub's runners): checked in each action's repository, action.yml's runs.using per major
// tag. An action missing here fails the test, so a new one is checked before it is shown.
var node24 = map[string]int{
	"actions/checkout": 5, "actions/setup-go": 6, "actions/cache": 5, "actions/upload-artifact": 6,
	"actions/download-artifact": 7, "actions/setup-java": 5, "actions/setup-python": 6,
	"actions/create-github-app-token": 3, "aws-actions/configure-aws-credentials": 6,
	"actions/attest-build-provenance": 3, "docker/setup-qemu-action": 4, "docker/setup-buildx-action": 4,
	"docker/login-action": 4, "sigstore/cosign-installer": 4, "anchore/sbom-action/download-syft": 0,
	"goreleaser/goreleaser-action": 7,
}

// block is one ```yaml block of a Markdown file.
type block struct {
	line int // of the opening fence, 1-based
	text string
}

func yamlBlocks(md string) []block {
	var out []block
	var cur *block
	for i, l := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```yaml":
			cur = &block{line: i + 1}
		case cur != nil && strings.TrimSpace(l) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	return out
}

// kind tells a workflow (top-level keys), a run of steps (an indented "- "), or a .cdkbot.yml
// example (its first line says so).
func kind(text string) string {
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			continue
		case strings.HasPrefix(t, "# .cdkbot.yml"):
			return "config"
		case strings.HasPrefix(t, "#"):
			continue
		case strings.HasPrefix(t, "- "):
			return "steps"
		case l == t:
			return "workflow"
		}
		return "unknown"
	}
	return "unknown"
}

// asWorkflow makes a run of steps a workflow of one job, dedented, so actionlint checks it in place.
func asWorkflow(steps string) (string, int) {
	lines := strings.Split(strings.TrimRight(steps, "\n"), "\n")
	indent := -1
	for _, l := range lines {
		if t := strings.TrimLeft(l, " "); t != "" && !strings.HasPrefix(t, "#") {
			if n := len(l) - len(t); indent < 0 || n < indent {
				indent = n
			}
		}
	}
	const head = "on: push\npermissions: {}\njobs:\n  example:\n    runs-on: ubuntu-latest\n    steps:\n"
	var b strings.Builder
	b.WriteString(head)
	for _, l := range lines {
		if t := strings.TrimLeft(l, " "); t == "" || strings.HasPrefix(t, "#") {
			l = t
		} else {
			l = l[indent:]
		}
		b.WriteString("      " + l + "\n")
	}
	return b.String(), strings.Count(head, "\n")
}

func linter(t *testing.T) *actionlint.Linter {
	t.Helper()
	// No shellcheck or pyflakes (not pinned here): the run: scripts are short and read by people.
	// actionlint 1.7.12's data on actions/create-github-app-token predates v3, whose action.yml
	// takes client-id and no longer requires the deprecated app-id.
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{IgnorePatterns: []string{
		`input "client-id" is not defined in action "actions/create-github-app-token@v3"`,
		`missing input "app-id" which is required by action "actions/create-github-app-token@v3"`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var usesRE = regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*([^@\s]+)@(\S+)(?:\s*#\s*(v[0-9][^\s]*))?`)

// checkUses fails an action below its Node 24 major, or one the table does not know.
func checkUses(t *testing.T, where, text string) {
	t.Helper()
	for _, m := range usesRE.FindAllStringSubmatch(text, -1) {
		action, ref, comment := m[1], m[2], m[3]
		if strings.HasPrefix(action, "./") || strings.HasPrefix(action, "cdkbot/cdkbot") {
			continue
		}
		want, ok := node24[action]
		if !ok {
			t.Errorf("%s: uses %s: add it to node24 with the first major that runs on Node 24", where, action)
			continue
		}
		v := ref
		if regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(ref) {
			if v = comment; v == "" {
				t.Errorf("%s: uses %s@%s: a SHA pin needs its version in a comment (# v1.2.3)", where, action, ref)
				continue
			}
		}
		major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(v, "v"), ".", 2)[0])
		if err != nil {
			t.Errorf("%s: uses %s@%s: not a version", where, action, v)
			continue
		}
		if major < want {
			t.Errorf("%s: uses %s@%s: Node 20 or older; use v%d or newer", where, action, v, want)
		}
	}
}

// hasPermissions: a top-level permissions key, or one in every job.
func hasPermissions(wf *actionlint.Workflow) bool {
	if wf.Permissions != nil {
		return true
	}
	for _, j := range wf.Jobs {
		if j.Permissions == nil {
			return false
		}
	}
	return len(wf.Jobs) > 0
}

// lint reports actionlint's errors at file:line, where text's line 1+offset is the file's line first.
func lint(t *testing.T, l *actionlint.Linter, file string, first int, text string, offset int) {
	t.Helper()
	where := file + ":" + strconv.Itoa(first)
	errs, err := l.Lint(file, []byte(text), nil)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", file, first+e.Line-1-offset, e.Column, e.Message, e.Kind)
	}
	wf, perrs := actionlint.Parse([]byte(text))
	if len(perrs) == 0 && !hasPermissions(wf) {
		t.Errorf("%s: no permissions: the example must say what its token may do", where)
	}
}

// TestReadmeWorkflows lints every workflow in README.md as a user would paste it.
func TestReadmeWorkflows(t *testing.T) {
	md, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	l := linter(t)
	blocks := yamlBlocks(strings.ReplaceAll(string(md), "\r\n", "\n")) // a Windows checkout's line ends
	workflows := 0
	for _, b := range blocks {
		where := "README.md:" + strconv.Itoa(b.line)
		switch kind(b.text) {
		case "config":
			continue
		case "workflow":
			lint(t, l, "README.md", b.line+1, b.text, 0)
		case "steps":
			wf, offset := asWorkflow(b.text)
			lint(t, l, "README.md", b.line+1, wf, offset)
		default:
			t.Errorf("%s: a ```yaml block that is neither a workflow, a run of steps nor a .cdkbot.yml example", where)
		}
		checkUses(t, where, b.text)
		workflows++
	}
	if workflows < 6 {
		t.Errorf("found %d workflow examples in README.md; the extraction is broken", workflows)
	}
}

// TestProjectWorkflows lints .github/workflows, whose actions are pinned by SHA with the version
// in a comment.
func TestProjectWorkflows(t *testing.T) {
	files, _ := filepath.Glob("../../.github/workflows/*.yml")
	if len(files) == 0 {
		t.Fatal("no workflows found")
	}
	l := linter(t)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		where := strings.TrimPrefix(filepath.ToSlash(f), "../../")
		text := strings.ReplaceAll(string(b), "\r\n", "\n")
		lint(t, l, where, 1, text, 0)
		checkUses(t, where, text)
		for _, m := range usesRE.FindAllStringSubmatch(text, -1) {
			if !strings.HasPrefix(m[1], "./") && !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(m[2]) {
				t.Errorf("%s: uses %s@%s: pin the project's actions by commit SHA", where, m[1], m[2])
			}
		}
	}
}
