package cli

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// hostileValue is what a pull request's app can put in an artifact id, a stack name, a logical id,
// a tag or a value: a line that runs as a workflow command, terminal escapes (clear screen, an
// OSC 8 hyperlink), a zero-width space beside a look-alike, a right-to-left override, a legacy
// "##[" command, URLs, a www. name, an e-mail address and a team mention; hostileLead starts
// with a workflow command of its own.
const (
	hostileValue = "Tab\u200ble\n::error::forged \x1b[2J\x1b]8;;https://evil.test\x07click\x1b]8;;\x07 \u202eexe.txt " +
		"##[warning]x https://evil.test www.evil.test a@evil.test @org/team"
	hostileLead = "::add-mask::lead"
)

// writeHostileAssembly writes an assembly whose ids, names, tags, logical ids and values are
// hostile; value is the queue's and bucket's name (the base's differ from the head's).
func writeHostileAssembly(t *testing.T, value string) string {
	t.Helper()
	dir := t.TempDir()
	writeJSONFile(t, filepath.Join(dir, "t.json"), map[string]any{"Resources": map[string]any{
		hostileValue: map[string]any{"Type": "AWS::SQS::Queue", "Properties": map[string]any{"QueueName": value,
			"Tags": []any{map[string]any{"Key": hostileValue, "Value": value}}}},
		hostileLead: map[string]any{"Type": "AWS::S3::Bucket", "Properties": map[string]any{"BucketName": value}},
	}, "Outputs": map[string]any{"Out": map[string]any{"Value": value}}})
	writeJSONFile(t, filepath.Join(dir, "manifest.json"), map[string]any{"version": "36.0.0", "artifacts": map[string]any{
		hostileValue: map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"templateFile": "t.json", "stackName": "Name" + hostileValue,
				"tags": map[string]any{hostileValue: hostileValue, hostileLead: hostileValue}},
			"metadata": map[string]any{"/" + hostileValue + "/Queue": []any{
				map[string]any{"type": "aws:cdk:logicalId", "data": hostileValue},
				map[string]any{"type": "aws:cdk:warning", "data": hostileValue}}}},
		hostileLead: map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"templateFile": "t.json"}},
	}})
	return dir
}

// An assembly is the pull request's: whatever its ids and values say, no command prints a line
// that GitHub's runner would run as a workflow command (every "::" that starts a line is
// cdkbot's own, and this run has none), writes a terminal escape or leaves a zero-width or
// bidirectional character as it is; the Markdown views let no link or mention through. Before,
// the artifact id's "\n::error::forged" was printed raw by inspect, diff, plan and review.
func TestHostileAssemblyThroughEveryCommand(t *testing.T) {
	base, head := writeHostileAssembly(t, "old"), writeHostileAssembly(t, hostileValue)
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"inspect.txt", []string{"inspect", head}},
		{"", []string{"inspect", head, "--format", "json"}},
		{"diff.txt", []string{"diff", base, head}},
		{"diff.md", []string{"diff", base, head, "--format", "markdown"}},
		{"", []string{"diff", base, head, "--format", "json"}},
		{"plan.txt", []string{"plan", head}},
		{"", []string{"plan", head, "--format", "json"}},
		{"", []string{"plan", head, "--format", "github-matrix"}},
		{"review.txt", []string{"review", "--base-assembly", base, "--head-assembly", head}},
		{"review.md", []string{"review", "--base-assembly", base, "--head-assembly", head, "--format", "markdown"}},
		{"", []string{"review", "--base-assembly", base, "--head-assembly", head, "--format", "json"}},
	} {
		name := c.args[0]
		if i := slices.Index(c.args, "--format"); i >= 0 {
			name += " --format " + c.args[i+1]
		}
		code, stdout, stderr := run(t, c.args...)
		if code == ExitUsage || code == ExitFailure {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, stdout, stderr)
		}
		assertNoCommandsOrEscapes(t, name+" (stdout)", stdout)
		assertNoCommandsOrEscapes(t, name+" (stderr)", stderr)
		switch {
		case strings.HasSuffix(c.golden, ".md"):
			if found := autolinkable(stdout); len(found) > 0 {
				t.Errorf("%s: links or mentions %q", name, found)
			}
		case c.golden == "":
			if !json.Valid([]byte(stdout)) {
				t.Errorf("%s: invalid JSON:\n%s", name, stdout)
			}
		}
		if c.golden != "" {
			if !strings.Contains(stdout, `Tab\u200ble`) && !strings.Contains(stdout, `Tab\\u200ble`) {
				t.Errorf("%s: the zero-width space is not shown:\n%s", name, stdout)
			}
			// The hidden marker is the review's record (its own tests own it), not a view.
			view := strings.NewReplacer(head, "HEAD", base, "BASE").Replace(hiddenComment.ReplaceAllString(stdout, "<!-- … -->"))
			golden.Assert(t, filepath.Join("testdata", "hostile", c.golden), []byte(view))
		}
	}
}

// assertNoCommandsOrEscapes checks one stream a command wrote: no line the runner runs as a
// workflow command (a leading "::" once white space is trimmed, as the runner trims it, or a
// legacy "##[" anywhere), no ESC, no control, invisible or bidirectional character as it is.
func assertNoCommandsOrEscapes(t *testing.T, name, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if l := strings.TrimLeftFunc(line, unicode.IsSpace); strings.HasPrefix(l, "::") || strings.Contains(line, "##[") {
			t.Errorf("%s: a workflow command: %q", name, line)
		}
	}
	if i := strings.IndexFunc(out, func(r rune) bool {
		return r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
	}); i >= 0 {
		t.Errorf("%s: %U as it is in %q", name, []rune(out[i:])[0], out[max(0, i-40):min(len(out), i+40)])
	}
}

// autolinkable finds what GitHub would link or mention in Markdown (extended autolinks, e-mail
// addresses, @mentions), as written and with entities decoded; hidden comments render nothing.
func autolinkable(md string) []string {
	md = hiddenComment.ReplaceAllString(md, "")
	var found []string
	for _, text := range []string{md, html.UnescapeString(md)} {
		found = append(found, gfmAutolink.FindAllString(text, -1)...)
	}
	return found
}

var (
	gfmAutolink = regexp.MustCompile(`(?i)(?:(?:https?|ftp)://|\bwww\.)[^\s<]*` +
		`|[a-z0-9.+_-]+@[a-z0-9_-]+(?:\.[a-z0-9_-]+)+` +
		`|(?:^|[^a-z0-9_` + "`" + `])@[a-z0-9][a-z0-9-]*(?:/[a-z0-9_-]+)?`)
	hiddenComment = regexp.MustCompile(`(?s)<!--.*?-->`)
)

// A template with a key twice in one object is refused, naming the file, the key and where:
// JSON parsers keep one of the two and which one differs, so CloudFormation could deploy the
// value the review did not show. Before, the last one won silently (manifests were refused).
func TestTemplateWithARepeatedKeyIsRefused(t *testing.T) {
	dir := t.TempDir()
	old := writeFile(t, dir, "old.json", `{"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "a"}}}}`)
	twice := writeFile(t, dir, "twice.json",
		"{\"Resources\": {\"Q\": {\"Type\": \"AWS::SQS::Queue\",\n  \"Properties\": {\"QueueName\": \"shown\", \"QueueName\": \"deployed\"}}}}")
	code, _, stderr := run(t, "diff", old, twice)
	if code != ExitUsage || !strings.Contains(stderr, twice) ||
		!strings.Contains(stderr, `the key "QueueName" appears twice in the object at /Resources/Q/Properties`) ||
		!strings.Contains(stderr, "line 2, column 40") {
		t.Errorf("template file: exit %d\n%s", code, stderr)
	}
	yaml := writeFile(t, dir, "twice.yaml", "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n  Q:\n    Type: AWS::SNS::Topic\n")
	if code, _, stderr := run(t, "diff", old, yaml); code != ExitUsage || !strings.Contains(stderr, yaml) ||
		!strings.Contains(stderr, `the key "Q" appears twice in the object at /Resources`) {
		t.Errorf("YAML template: exit %d\n%s", code, stderr)
	}
	// In an assembly: the stack's template file is named.
	base, head := writeHostileAssembly(t, "old"), writeHostileAssembly(t, "new")
	tpl := filepath.Join(head, "t.json")
	b, _ := os.ReadFile(tpl)
	os.WriteFile(tpl, []byte(strings.Replace(string(b), `"BucketName":"new"`, `"BucketName":"new","BucketName":"other"`, 1)), 0o644)
	code, _, stderr = run(t, "diff", base, head)
	if code == ExitOK || code == ExitVerdict || !strings.Contains(stderr, "t.json") || !strings.Contains(stderr, `the key "BucketName" appears twice`) {
		t.Errorf("assembly: exit %d\n%s", code, stderr)
	}
	assertNoCommandsOrEscapes(t, "the error naming a hostile stack", stderr)
}

// noisyApp is stackApp printing what a pull request's app may print to take over the runner:
// a secret to mask (which hides it from every later log line), commands switched off, a terminal
// escape, a legacy command, and an unterminated last line.
const noisyApp = `console.log('::add-mask::secret');
console.log('  ::stop-commands::tok');
console.log('\x1b[2Jcleared ##[error]legacy Tab\u200ble');
process.on('exit', () => process.stdout.write('::error::unterminated'));
` + stackApp

// The app's own output reaches the log line by line, cleaned, whether both revisions are
// synthesized or the base comes from the cache and only the head runs. Before, a head
// synthesized alone (the base from the cache) wrote straight to the log: its "::add-mask::" and
// "::stop-commands::" reached the runner.
func TestTheAppsOutputCannotRunWorkflowCommands(t *testing.T) {
	dir, app := newAppRepo(t)
	base := gitcli.Commit(t, dir, "app", map[string]string{"infra/cdk.json": `{"app": "node app.js"}`, "infra/app.js": noisyApp,
		"infra/resources.txt": "Orders\n"})
	head := gitcli.Commit(t, dir, "queue", map[string]string{"infra/resources.txt": "Orders\nPayments\n"})
	again := gitcli.Commit(t, dir, "another", map[string]string{"infra/resources.txt": "Orders\nPayments\nRefunds\n"})
	for _, c := range []struct {
		name, head string
		runs       int
	}{
		{"both synthesized", head, 2},
		{"the base from the cache", again, 1},
	} {
		code, stdout, stderr := run(t, "review", "--repo", app, "--base", base, "--head", c.head, "--no-color")
		if code != ExitOK || strings.Count(stderr, "app ran:") != c.runs || !strings.Contains(stdout, "Payments") {
			t.Fatalf("%s: exit %d\n%s\n%s", c.name, code, stdout, stderr)
		}
		assertNoCommandsOrEscapes(t, c.name, stderr)
		for _, want := range []string{`\x3a:add-mask::secret`, `  \x3a:stop-commands::tok`, `\x1b[2Jcleared ##\x5berror]legacy Tab\u200ble`,
			`\x3a:error::unterminated`} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: the app's line %q is not shown cleaned:\n%s", c.name, want, stderr)
			}
		}
	}
}

// The action's annotations and log groups name stacks, resources and approvers: each is one
// workflow command of cdkbot's, its message cleaned (the escapes and invisible characters
// shown), never a second command.
func TestAnnotationsAreCleaned(t *testing.T) {
	var out strings.Builder
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push"}
	rt, err := ghaction.New(func(k string) string { return env[k] }, &out)
	if err != nil {
		t.Fatal(err)
	}
	r := cleanRunner{rt}
	r.Error("cdkbot: gate destroy blocks this change: %s", hostileValue)
	r.Warning("cdkbot: %s", hostileLead)
	r.Notice("cdkbot: approved by %s", hostileValue)
	r.Group("cdkbot: deploying " + hostileValue)
	r.EndGroup()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	own := regexp.MustCompile(`^::(error|warning|notice|group|endgroup)::cdkbot|^::endgroup::$`)
	for _, l := range lines {
		if !own.MatchString(l) {
			t.Errorf("not one of cdkbot's own commands: %q", l)
		}
	}
	if len(lines) != 5 || strings.Contains(out.String(), "\x1b") || strings.ContainsRune(out.String(), '\u200b') ||
		strings.ContainsRune(out.String(), '\u202e') || !strings.Contains(out.String(), `Tab\u200ble%0A\x3a:error::forged`) {
		t.Errorf("annotations:\n%s", out.String())
	}
}
