package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/pipeline"
	"go.yaml.in/yaml/v3"
)

type actionMetadata struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Image string `yaml:"image"`
	} `yaml:"runs"`
}

func readAction(t *testing.T, path string) actionMetadata {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m actionMetadata
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// action.yml declares exactly the inputs the code reads, and the image's users are the
// synth-user default.
func TestActionMetadataMatchesTheCode(t *testing.T) {
	m := readAction(t, filepath.Join("..", "..", "action.yml"))
	read := map[string]bool{}
	files, _ := filepath.Glob("*.go")
	re := regexp.MustCompile(`(?:rt\.Input|\.path)\("([a-z-]+)"\)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, _ := os.ReadFile(f)
		for _, sub := range re.FindAllStringSubmatch(string(b), -1) {
			read[sub[1]] = true
		}
	}
	// The review's settings are read from one table, by name (pipeline.ReviewSettings).
	for _, s := range pipeline.ReviewSettings {
		if s.Action {
			read[s.Name] = true
		}
	}
	for name := range read {
		if _, ok := m.Inputs[name]; !ok {
			t.Errorf("the code reads input %q, which action.yml does not declare", name)
		}
	}
	for name := range m.Inputs {
		if !read[name] {
			t.Errorf("action.yml declares input %q, which the code never reads", name)
		}
	}
	if m.Runs.Using != "docker" || m.Runs.Image != "Dockerfile" {
		t.Errorf("main's action.yml must build the Dockerfile (releases point it at their image): %+v", m.Runs)
	}
	dockerfile, _ := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	for _, user := range strings.Split(m.Inputs["synth-user"].Default, ",") {
		if !strings.Contains(string(dockerfile), "--shell /usr/sbin/nologin "+user) {
			t.Errorf("synth-user default %q is not a user the Dockerfile creates", user)
		}
	}
}

// The release commit's action.yml pulls that release's image by digest and is otherwise
// unchanged; its setup action installs that release.
func TestReleaseActionPointsAtTheImage(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	root := filepath.Join("..", "..")
	orig, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	origSetup, err := os.ReadFile(filepath.Join(root, "setup", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "setup"), 0o755)
	file := filepath.Join(dir, "action.yml")
	os.WriteFile(file, orig, 0o644)
	os.WriteFile(filepath.Join(dir, "setup", "action.yml"), origSetup, 0o644)
	script := filepath.Join(root, "scripts", "release-action.sh")
	image := "ghcr.io/cdkbot/cdkbot@sha256:" + strings.Repeat("ab", 32)
	if out, err := exec.Command("bash", script, "1.2.3", image, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	before, after := readAction(t, filepath.Join(root, "action.yml")), readAction(t, file)
	if after.Runs.Image != "docker://"+image || len(after.Inputs) != len(before.Inputs) {
		t.Errorf("release action.yml: %+v", after.Runs)
	}
	setup := readAction(t, filepath.Join(dir, "setup", "action.yml"))
	if setup.Inputs["version"].Default != "1.2.3" || readAction(t, filepath.Join(root, "setup", "action.yml")).Inputs["version"].Default != "latest" {
		t.Errorf("release setup/action.yml: version defaults to %q", setup.Inputs["version"].Default)
	}
	changed, _ := os.ReadFile(file)
	if diff := slices.Compare(strings.Split(string(orig), "\n"), strings.Split(string(changed), "\n")); diff == 0 {
		t.Error("nothing changed")
	}
	// Run twice (or on a release commit) it refuses: there is no Dockerfile line to replace.
	if out, err := exec.Command("bash", script, "1.2.4", image, dir).CombinedOutput(); err == nil || !strings.Contains(string(out), "found 0") {
		t.Errorf("second run: %v %s", err, out)
	}
	if out, err := exec.Command("bash", script, "latest", image, dir).CombinedOutput(); err == nil || !strings.Contains(string(out), "not 1.2.3") {
		t.Errorf("bad version: %v %s", err, out)
	}
	// A tag is not a digest: the release names the image it built, not whatever a tag points at later.
	if out, err := exec.Command("bash", script, "1.2.3", "ghcr.io/cdkbot/cdkbot:v1.2.3", dir).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "not IMAGE@sha256") {
		t.Errorf("image by tag: %v %s", err, out)
	}
}

// An input the action shares with the CLI's flags has the default of the one settings table,
// so a workflow and a terminal review the same way unless told otherwise. synth-user differs
// on purpose: the image brings its two synthesis users; a workstation has none.
func TestActionDefaultsAreTheSettingsDefaults(t *testing.T) {
	m := readAction(t, filepath.Join("..", "..", "action.yml"))
	for _, s := range pipeline.ReviewSettings {
		if !s.Action || s.Name == "synth-user" {
			continue
		}
		if got := m.Inputs[s.Name].Default; got != s.Default {
			t.Errorf("action.yml input %s defaults to %q, the review's setting to %q", s.Name, got, s.Default)
		}
	}
}
