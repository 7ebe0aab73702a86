package pipeline

import (
	"path/filepath"
	"testing"

	"github.com/cdkbot/cdkbot/internal/gitrepo"
)

// An environment's context is part of the synthesis cache key: prod never reuses dev's
// assembly; without context the key is what it always was.
func TestSynthKeyIncludesContext(t *testing.T) {
	dir, head := appsRepo(t)
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(realPath(repo.Root()), "infra", "network")
	key := func(ctx map[string]string) string {
		j, err := prepareSynth(repo, head, app, "", "head", ReviewOptions{Context: ctx})
		if err != nil {
			t.Fatal(err)
		}
		return j.key
	}
	none, dev, prod := key(nil), key(map[string]string{"stage": "dev"}), key(map[string]string{"stage": "prod"})
	if none == dev || dev == prod || none != key(map[string]string{}) {
		t.Errorf("keys: none %s, dev %s, prod %s", none, dev, prod)
	}
}
