package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/synth"
)

// fakeHost is a machine as chooseSandbox sees it, recording the users it is asked to create.
type fakeHost struct {
	uid        int
	sudo       bool
	users      map[string]*synth.Identity
	created    []string // name, and "+sudo" when created through sudo
	sudoAsked  bool
	createFail error
}

func (h *fakeHost) UID() int { return h.uid }

func (h *fakeHost) Sudo(context.Context) bool { h.sudoAsked = true; return h.sudo }

func (h *fakeHost) LookupUser(name string) (*synth.Identity, error) {
	if u, ok := h.users[name]; ok {
		c := *u
		return &c, nil
	}
	return nil, synth.ErrNoUser
}

func (h *fakeHost) CreateUser(_ context.Context, name string, sudo bool) error {
	if h.createFail != nil {
		return h.createFail
	}
	how := name
	if sudo {
		how += "+sudo"
	}
	h.created = append(h.created, how)
	if h.users == nil {
		h.users = map[string]*synth.Identity{}
	}
	h.users[name] = &synth.Identity{UID: uint32(990 - len(h.users)), GID: uint32(990 - len(h.users))}
	return nil
}

var _ synth.Host = (*fakeHost)(nil)

// Who synthesizes, by machine and door: the action's pull request code gets cdkbot's own users
// (found, or created as root or through sudo) or is refused; a workstation runs the user's code
// as them unless told otherwise.
func TestChooseSandbox(t *testing.T) {
	image := func() *fakeHost {
		return &fakeHost{uid: 0, users: map[string]*synth.Identity{
			"cdkbot-base": {UID: 10001, GID: 10001}, "cdkbot-head": {UID: 10002, GID: 10002}}}
	}
	for _, c := range []struct {
		name     string
		host     *fakeHost
		spec     string
		pr       bool
		sudo     bool     // the users are reached through sudo
		created  []string // users created
		noUsers  bool     // the app runs as cdkbot's own user
		noCache  bool
		usageErr string // a usage error saying this
	}{
		{name: "the image", host: image(), pr: true},
		{name: "the image, named", host: image(), spec: "cdkbot-base,cdkbot-head", pr: true},
		{name: "root without the users", host: &fakeHost{uid: 0}, pr: true, created: []string{"cdkbot-base", "cdkbot-head"}},
		{name: "a hosted runner", host: &fakeHost{uid: 1001, sudo: true}, pr: true, sudo: true,
			created: []string{"cdkbot-base+sudo", "cdkbot-head+sudo"}},
		{name: "a hosted runner, users made earlier", host: &fakeHost{uid: 1001, sudo: true, users: image().users}, pr: true,
			sudo: true},
		{name: "no root, no sudo", host: &fakeHost{uid: 1001}, pr: true,
			usageErr: "synthesizing pull request code needs a sandbox, and there is none here: cdkbot runs as uid 1001"},
		{name: "no root, no sudo, users named", host: &fakeHost{uid: 1001}, spec: "cdkbot-base,cdkbot-head", pr: true,
			usageErr: "set synth-user: none to accept the risk"},
		{name: "Windows", host: &fakeHost{uid: -1}, pr: true, usageErr: "synthesis users need Linux or macOS"},
		{name: "none", host: &fakeHost{uid: 1001}, spec: "none", pr: true, noUsers: true, noCache: true},
		{name: "a foreign user is not created", host: &fakeHost{uid: 1001, sudo: true}, spec: "builder", pr: true,
			usageErr: "no such user"},
		{name: "cdkbot's own user is no sandbox", host: &fakeHost{uid: 1001, sudo: true}, spec: "1001,1002", pr: true,
			usageErr: "it is the user cdkbot runs as"},
		{name: "creating fails", host: &fakeHost{uid: 1001, sudo: true, createFail: context.DeadlineExceeded}, pr: true,
			usageErr: "cdkbot could not create it: context deadline exceeded"},
		{name: "a workstation", host: &fakeHost{uid: 1000, sudo: true}, noUsers: true},
		{name: "a workstation, none", host: &fakeHost{uid: 1000}, spec: "none", noUsers: true},
		{name: "a workstation asking for users", host: &fakeHost{uid: 1000}, spec: "cdkbot-base,cdkbot-head",
			usageErr: "needs cdkbot to run as root or with passwordless sudo"},
		{name: "a workstation with sudo", host: &fakeHost{uid: 1000, sudo: true}, spec: "cdkbot-base,cdkbot-head", sudo: true,
			created: []string{"cdkbot-base+sudo", "cdkbot-head+sudo"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			opts := ReviewOptions{SynthUser: c.spec, PullRequestCode: c.pr, Host: c.host}
			err := chooseSandbox(context.Background(), &opts)
			if c.usageErr != "" {
				if !failure.Is(err, failure.Usage) || !strings.Contains(err.Error(), c.usageErr) {
					t.Fatalf("got %v, want a usage error saying %q", err, c.usageErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(c.host.created, ",") != strings.Join(c.created, ",") {
				t.Errorf("created %v, want %v", c.host.created, c.created)
			}
			if (opts.cache == "") != c.noCache {
				t.Errorf("cache %q", opts.cache)
			}
			if c.noUsers {
				if opts.synthUsers != nil || c.host.sudoAsked {
					t.Errorf("users %v (sudo asked: %v), want none", opts.synthUsers, c.host.sudoAsked)
				}
				return
			}
			b, h := opts.synthUsers["base"], opts.synthUsers["head"]
			if b == nil || h == nil || b.UID == h.UID || b.Sudo != c.sudo || h.Sudo != c.sudo || opts.sudo != c.sudo {
				t.Errorf("users %+v %+v, want two through sudo: %v", b, h, c.sudo)
			}
		})
	}
}

// The log says whom the app runs as when nothing else would; for pull request code run as
// cdkbot's own user, the review says it too.
func TestAnnounceSandbox(t *testing.T) {
	for _, c := range []struct {
		name      string
		opts      ReviewOptions
		log, note string
	}{
		{"none", ReviewOptions{PullRequestCode: true}, "warning: synth-user none", "could read cdkbot's credentials"},
		{"yours", ReviewOptions{}, "the app runs as you", ""},
		{"sudo", ReviewOptions{PullRequestCode: true, SynthUser: "cdkbot-base,cdkbot-head", sudo: true,
			synthUsers: map[string]*synth.Identity{"base": {UID: 1}, "head": {UID: 2}}}, "through sudo", ""},
		{"root", ReviewOptions{PullRequestCode: true, synthUsers: map[string]*synth.Identity{"base": {UID: 1}, "head": {UID: 2}}},
			"", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log strings.Builder
			c.opts.Log = &log
			announceSandbox(&c.opts)
			if (c.log == "") != (log.Len() == 0) || !strings.Contains(log.String(), c.log) {
				t.Errorf("log %q, want %q", log.String(), c.log)
			}
			if notes := strings.Join(c.opts.Notes, "\n"); (c.note == "") != (notes == "") || !strings.Contains(notes, c.note) {
				t.Errorf("notes %q, want %q", notes, c.note)
			}
		})
	}
}
