package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cdkbot/cdkbot/internal/apps"
	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
)

// appsRepo is a monorepo of three apps (one at the root of services/, two below), a shared
// workspace package.json and docs, committed once; it returns the directory and the commit.
func appsRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	gitcli.Run(t, dir, "init", "-q")
	for name, body := range map[string]string{
		"package.json":                  `{"workspaces":["infra/*","services/*/infra"]}`,
		"README.md":                     "# monorepo\n",
		".cdkbot.yml":                   "apps:\n  context: { stage: [dev, prod] }\n  ignore: [examples/**]\n",
		"infra/network/cdk.json":        `{"app":"node network.js"}`,
		"infra/network/network.js":      "1",
		"services/shop/infra/cdk.json":  `{"app":"python3 app.py"}`,
		"services/shop/infra/app.py":    "1",
		"services/shop/src/handler.py":  "1",
		"services/users/infra/cdk.json": `{"app":"node users.js"}`,
		"services/users/infra/users.js": "1",
		"examples/hello/cdk.json":       `{"app":"x"}`,
		"shared/constants.json":         "{}",
	} {
		writeRepoFile(t, dir, name, body)
	}
	gitcli.Run(t, dir, "add", "-A")
	gitcli.Run(t, dir, "commit", "-qm", "apps")
	return dir, gitcli.Run(t, dir, "rev-parse", "HEAD")
}

func writeRepoFile(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func commitChange(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		writeRepoFile(t, dir, name, body)
	}
	gitcli.Run(t, dir, "add", "-A")
	gitcli.Run(t, dir, "commit", "-qm", "change")
	return gitcli.Run(t, dir, "rev-parse", "HEAD")
}

func legKeys(p *AppsPlan) []string {
	var out []string
	for _, l := range p.Legs {
		out = append(out, l.Status.Symbol()+" "+l.Key)
	}
	return out
}

// Only the apps whose synthesis reads what a change changed are reviewed: an app's own files
// touch it alone; a workspace file every app reads, or a --synth-inputs path, touches them all;
// so does the configuration; a file no synthesis reads touches none.
func TestAppsTouched(t *testing.T) {
	dir, base := appsRepo(t)
	all := []string{"~ k/infra/network/dev", "~ k/infra/network/prod", "~ k/services/shop/infra/dev",
		"~ k/services/shop/infra/prod", "~ k/services/users/infra/dev", "~ k/services/users/infra/prod"}
	for _, c := range []struct {
		name   string
		change map[string]string
		inputs []string
		want   []string
	}{
		{"one app", map[string]string{"services/shop/infra/app.py": "2"}, nil, []string{
			"~ k/services/shop/infra/dev", "~ k/services/shop/infra/prod", "= k/infra/network/dev", "= k/infra/network/prod",
			"= k/services/users/infra/dev", "= k/services/users/infra/prod"}},
		{"shared workspace file", map[string]string{"package.json": `{"workspaces":["*"]}`}, nil, all},
		{"synth input", map[string]string{"shared/constants.json": `{"a":1}`}, []string{"shared"}, all},
		{"synth input unread", map[string]string{"shared/constants.json": `{"a":2}`}, nil, []string{
			"= k/infra/network/dev", "= k/infra/network/prod", "= k/services/shop/infra/dev",
			"= k/services/shop/infra/prod", "= k/services/users/infra/dev", "= k/services/users/infra/prod"}},
		{"configuration", map[string]string{".cdkbot.yml": "apps:\n  context: { stage: [dev, prod] }\n  ignore: [examples/*]\n"}, nil, all},
		{"new app", map[string]string{"infra/dns/cdk.json": `{"app":"x"}`}, nil, []string{
			"+ k/infra/dns/dev", "+ k/infra/dns/prod", "= k/infra/network/dev", "= k/infra/network/prod",
			"= k/services/shop/infra/dev", "= k/services/shop/infra/prod", "= k/services/users/infra/dev",
			"= k/services/users/infra/prod"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gitcli.Run(t, dir, "checkout", "-q", "--detach", base)
			head := commitChange(t, dir, c.change)
			p, err := Apps(context.Background(), AppsOptions{Repo: dir, Base: base, Head: head, Key: "k", SynthInputs: c.inputs})
			if err != nil {
				t.Fatal(err)
			}
			if got := legKeys(p); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			if p.Base != base || p.Head != head {
				t.Errorf("compared %s..%s", p.Base, p.Head)
			}
		})
	}
}

// A file no synthesis reads (docs at the top of the repository) touches no app: the keys are the
// review cache's (prepareSynth), so an unchanged app is one whose synthesis would be reused.
func TestAppsIgnoresWhatNoSynthesisReads(t *testing.T) {
	dir, base := appsRepo(t)
	gitcli.Run(t, dir, "checkout", "-q", "--detach", base)
	head := commitChange(t, dir, map[string]string{"README.md": "# docs only\n"})
	p, err := Apps(context.Background(), AppsOptions{Repo: dir, Base: base, Head: head, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Legs {
		if l.Status != apps.Unchanged {
			t.Errorf("%s: %s (%s), but no synthesis reads README.md", l.Key, l.Status, l.Why)
		}
	}
}

// Discovery at a revision lists its committed files, not the working tree's.
func TestAppsListsTheRevision(t *testing.T) {
	dir, base := appsRepo(t)
	writeRepoFile(t, dir, "uncommitted/cdk.json", "{}")
	p, err := Apps(context.Background(), AppsOptions{Repo: dir, Base: base, Head: base})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Legs) != 6 || p.Key != "default" {
		t.Errorf("%q", legKeys(p))
	}
	if _, err := Apps(context.Background(), AppsOptions{Repo: dir, Base: base, Head: "nosuchrev"}); err == nil {
		t.Error("an unknown head is an error")
	}
}

// An app whose cdk.json the change deletes is reported removed in each environment, after the
// reviewed legs: its stacks stay deployed (cdkbot deletes none), and the fan-out says so rather
// than dropping it. An app the base's configuration lists and the head's does not is removed too.
func TestAppsRemoved(t *testing.T) {
	dir, base := appsRepo(t)
	gitcli.Run(t, dir, "checkout", "-q", "--detach", base)
	gitcli.Run(t, dir, "rm", "-rq", "services/users/infra")
	head := commitChange(t, dir, map[string]string{"services/shop/infra/app.py": "2"})
	p, err := Apps(context.Background(), AppsOptions{Repo: dir, Base: base, Head: head, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"~ k/services/shop/infra/dev", "~ k/services/shop/infra/prod", "- k/services/users/infra/dev",
		"- k/services/users/infra/prod", "= k/infra/network/dev", "= k/infra/network/prod"}
	if got := legKeys(p); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if l := p.Legs[2]; l.Why != apps.RemovedWhy || l.Dir != "services/users/infra" {
		t.Errorf("removed leg %+v", l)
	}

	listed := "apps:\n  list:\n    - { name: net, dir: infra/network }\n    - { name: shop, dir: services/shop/infra }\n"
	gitcli.Run(t, dir, "checkout", "-q", "--detach", base)
	from := commitChange(t, dir, map[string]string{".cdkbot.yml": listed})
	to := commitChange(t, dir, map[string]string{".cdkbot.yml": "apps:\n  list:\n    - { name: net, dir: infra/network }\n"})
	p, err = Apps(context.Background(), AppsOptions{Repo: dir, Base: from, Head: to, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if got := legKeys(p); !reflect.DeepEqual(got, []string{"~ k/net", "- k/shop"}) {
		t.Errorf("unlisted: %q", got)
	}
}
