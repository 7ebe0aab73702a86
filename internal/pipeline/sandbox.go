package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/synth"
)

// Host is the machine a review chooses its sandbox on: who cdkbot runs as, whether passwordless
// sudo works, and the synthesis users (synth.System is this machine; tests give another).
type Host interface {
	UID() int
	Sudo(ctx context.Context) bool
	LookupUser(name string) (*synth.Identity, error)
	CreateUser(ctx context.Context, name string, sudo bool) error
}

var _ Host = synth.System{}

// DefaultSynthUsers are the synthesis users of the action's reviews (base, head): the image has
// them, and elsewhere cdkbot creates them when it may (as root, or with passwordless sudo).
const DefaultSynthUsers = "cdkbot-base,cdkbot-head"

// ownSynthUsers are the users cdkbot creates when they are missing: its own, dedicated to
// synthesis. A user named otherwise must exist.
var ownSynthUsers = strings.Split(DefaultSynthUsers, ",")

// chooseSandbox settles, before any revision is synthesized, who installs and synthesizes them
// (opts.synthUsers, reached as root or through sudo) and what may be cached (opts.cache).
// Pull request code runs as synthesis users or, with synth-user none, as cdkbot's own user;
// where there can be no synthesis users and none was not said, it is refused.
func chooseSandbox(ctx context.Context, opts *ReviewOptions) error {
	opts.cache = cacheRoot()
	spec := strings.TrimSpace(opts.SynthUser)
	if spec == "" && opts.PullRequestCode {
		spec = DefaultSynthUsers
	}
	opts.SynthUser = spec
	if spec == "" || spec == "none" {
		if opts.PullRequestCode {
			// Whatever cdkbot's user can write the app can too: no cached assembly or
			// dependency could be told from one the app forged.
			opts.cache = ""
		}
		return nil
	}
	host := opts.Host
	if host == nil {
		host = synth.System{}
	}
	if uid := host.UID(); uid != 0 {
		if opts.sudo = host.Sudo(ctx); !opts.sudo {
			return noSandbox(*opts, spec, uid)
		}
	}
	users, err := parseSynthUsers(ctx, spec, host, *opts)
	if err != nil {
		return err
	}
	for _, u := range users {
		u.Sudo = opts.sudo
	}
	opts.synthUsers = users
	return nil
}

// noSandbox is the refusal to synthesize without the synthesis users asked for, saying what to do.
func noSandbox(opts ReviewOptions, spec string, uid int) error {
	why := fmt.Sprintf("cdkbot runs as uid %d, not root, and passwordless sudo is not available "+
		"(`sudo -n true` failed)", uid)
	if uid < 0 {
		why = "synthesis users need Linux or macOS"
	}
	if !opts.PullRequestCode {
		return failure.Usagef("--synth-user %s: running the app as another user needs cdkbot to run as root "+
			"or with passwordless sudo, and %s: run as root, or leave --synth-user out (the app then runs as you)",
			spec, why)
	}
	return failure.Usagef("synthesizing pull request code needs a sandbox, and there is none here: %s, so the "+
		"pull request's app would run as cdkbot's own user and could read its credentials (the GitHub token, "+
		"AWS credentials) and files. Run the action's image (uses: cdkbot/cdkbot@v0), give the runner "+
		"passwordless sudo (GitHub-hosted runners have it; cdkbot then creates the users %s), "+
		"or set synth-user: none to accept the risk", why, strings.Join(ownSynthUsers, " and "))
}

// announceSandbox says, once a revision is about to be synthesized, whom the app runs as when
// the log would not otherwise tell: through sudo, or as cdkbot's own user. For pull request
// code run as cdkbot's user the review says it too.
func announceSandbox(opts *ReviewOptions) {
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	switch {
	case opts.synthUsers != nil && opts.sudo:
		logf("cdkbot: installing and synthesizing as the synthesis users (%s), through sudo", opts.SynthUser)
	case opts.synthUsers != nil:
	case opts.PullRequestCode:
		logf("cdkbot: warning: synth-user none: the pull request's app runs as cdkbot's own user, so it can read " +
			"cdkbot's credentials (the GitHub token, AWS credentials in its environment) and files, and what it " +
			"leaves running outlives cdkbot; nothing is cached or reused from the cache")
		opts.Notes = append(opts.Notes, "This pull request's app ran as cdkbot's own user (synth-user: none), "+
			"not in a sandbox: it could read cdkbot's credentials (the workflow's GitHub token, AWS credentials) "+
			"and change cdkbot's files. Run the action's image, or a runner with passwordless sudo, to synthesize "+
			"as users of its own.")
	default:
		logf("cdkbot: the app runs as you, with your files and credentials: it is your own code " +
			"(--synth-user runs it as other users, as root or with passwordless sudo)")
	}
}

// parseSynthUsers reads --synth-user: one user for both revisions, or BASE,HEAD so that the two
// never share a uid. cdkbot's own users are created when missing.
func parseSynthUsers(ctx context.Context, spec string, host Host, opts ReviewOptions) (
	map[string]*synth.Identity, error) {
	parts := strings.Split(spec, ",")
	if len(parts) > 2 {
		return nil, failure.Usagef("--synth-user %q: give one user, or two (base,head)", spec)
	}
	base, err := parseIdentity(ctx, strings.TrimSpace(parts[0]), host, opts)
	if err != nil {
		return nil, err
	}
	head := base
	if len(parts) == 2 {
		if head, err = parseIdentity(ctx, strings.TrimSpace(parts[1]), host, opts); err != nil {
			return nil, err
		}
		if head.UID == base.UID {
			return nil, failure.Usagef("--synth-user %q: the base and head users must differ", spec)
		}
	}
	return map[string]*synth.Identity{"base": base, "head": head}, nil
}

// parseIdentity reads one user: a name, a uid, or uid:gid.
func parseIdentity(ctx context.Context, spec string, host Host, opts ReviewOptions) (*synth.Identity, error) {
	bad := func(why string) error {
		return failure.Usagef("--synth-user %q: %s; give a user name, a uid or uid:gid", spec, why)
	}
	check := func(id *synth.Identity) (*synth.Identity, error) {
		switch uid := int64(id.UID); {
		case uid == 0:
			return nil, bad("it is root, which is no sandbox")
		case uid == int64(host.UID()):
			return nil, bad("it is the user cdkbot runs as, which is no sandbox")
		}
		return id, nil
	}
	uidText, gidText, hasGID := strings.Cut(spec, ":")
	if uid, err := strconv.ParseUint(uidText, 10, 32); err == nil {
		gid := uid
		if hasGID {
			g, err := strconv.ParseUint(gidText, 10, 32)
			if err != nil {
				return nil, bad("the group is not a number")
			}
			gid = g
		}
		if uid == 0 {
			return nil, bad("uid 0 is root, which is no sandbox")
		}
		return check(&synth.Identity{UID: uint32(uid), GID: uint32(gid)})
	}
	if hasGID {
		return nil, bad("uid:gid must be numbers")
	}
	id, err := host.LookupUser(spec)
	if errors.Is(err, synth.ErrNoUser) && slices.Contains(ownSynthUsers, spec) {
		if err := host.CreateUser(ctx, spec, opts.sudo); err != nil {
			return nil, failure.Usagef("--synth-user %q: the user does not exist and cdkbot could not create it: %v; "+
				"create it (dedicated to synthesis, no login shell), or set synth-user none to accept the risk", spec, err)
		}
		if id, err = host.LookupUser(spec); err == nil && opts.Log != nil {
			how := ""
			if opts.sudo {
				how = " through sudo"
			}
			fmt.Fprintf(opts.Log, "cdkbot: created the synthesis user %s (uid %d)%s\n", spec, id.UID, how)
		}
	}
	switch {
	case errors.Is(err, synth.ErrNoUser):
		return nil, bad("no such user")
	case err != nil:
		return nil, bad(err.Error())
	}
	return check(id)
}
