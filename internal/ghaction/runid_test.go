package ghaction

import (
	"io"
	"testing"
)

// Every attempt of every run has its own id; outside Actions there is none.
func TestRunID(t *testing.T) {
	for _, c := range []struct {
		id, attempt, want string
	}{
		{"5678", "1", "5678.1"},
		{"5678", "2", "5678.2"},
		{"5678", "", "5678"},
		{"", "", ""},
	} {
		env := map[string]string{"GITHUB_RUN_ID": c.id, "GITHUB_RUN_ATTEMPT": c.attempt}
		rt, err := New(func(k string) string { return env[k] }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := rt.RunID(); got != c.want {
			t.Errorf("GITHUB_RUN_ID=%q GITHUB_RUN_ATTEMPT=%q: %q, want %q", c.id, c.attempt, got, c.want)
		}
	}
}
