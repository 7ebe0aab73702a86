package publish

import (
	"context"
	"fmt"
	"strings"

	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// image publishes one docker image asset: check every destination, build once if any lacks
// it, then tag and push to each. Builds take a slot of their own, so a few heavy builds do not
// hold up file uploads.
func (r *run) image(ctx context.Context, i int, j publishplan.Job) error {
	if ctx.Err() != nil {
		return nil // stopped before this asset began: it stays skipped
	}
	stores := make([]ImageStore, len(j.Destinations))
	missing, err := r.check(ctx, i, j, func(k int, d publishplan.Destination) (bool, error) {
		st, err := r.o.Images(ctx, d)
		if err == nil && d.CreateRepository && !r.o.DryRun {
			err = st.CreateRepository(ctx, d.Repository)
		}
		if err != nil {
			return false, err
		}
		stores[k] = st
		return st.Exists(ctx, d.Repository, d.Tag)
	})
	if err != nil || len(missing) == 0 {
		return err
	}
	local := "cdkasset-" + strings.ToLower(j.ID)
	if argv := executable(j); argv != nil {
		// As cdk-assets: the command builds the image and prints its local tag.
		r.emit(Event{Asset: j.ID, State: Packaging})
		local, err = runExecutable(ctx, r.o.Root, argv)
	} else {
		err = r.build(ctx, j, local)
	}
	if err != nil {
		err = fmt.Errorf("asset %s (%s): %w", j.ID, j.Image.ResolvedDirectory, err)
		for _, k := range missing {
			r.fail(ctx, i, k, err)
		}
		return err
	}
	for _, k := range missing {
		d := j.Destinations[k]
		r.set(i, k, Uploading, 0, nil)
		if err := r.push(ctx, stores[k], local, d); err != nil {
			err = fmt.Errorf("asset %s → %s: %w", j.ID, describe(d), err)
			r.fail(ctx, i, k, err)
			return err
		}
		r.set(i, k, Published, 0, nil)
	}
	return nil
}

func (r *run) build(ctx context.Context, j publishplan.Job, local string) error {
	select {
	case r.builds <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.builds }()
	dir, err := Source(r.o.Root, j.Image.ResolvedDirectory)
	if err != nil {
		return err
	}
	r.emit(Event{Asset: j.ID, State: Packaging})
	return r.o.Docker.Run(ctx, buildArgs(*j.Image, local, dir), nil)
}

func (r *run) push(ctx context.Context, st ImageStore, local string, d publishplan.Destination) error {
	uri, err := st.URI(ctx, d.Repository)
	if err != nil {
		return err
	}
	if err := r.login(ctx, st); err != nil {
		return err
	}
	remote := uri + ":" + d.Tag
	if err := r.o.Docker.Run(ctx, []string{"tag", local, remote}, nil); err != nil {
		return err
	}
	return r.o.Docker.Run(ctx, []string{"push", remote}, nil)
}

// login runs `docker login` once per registry, the password on stdin so it never appears in a
// process list or a log.
func (r *run) login(ctx context.Context, st ImageStore) error {
	registry, user, password, err := st.Credentials(ctx)
	if err != nil {
		return err
	}
	r.loginMu.Lock()
	defer r.loginMu.Unlock()
	if r.logins[registry] {
		return nil
	}
	if err := r.o.Docker.Run(ctx, []string{"login", "--username", user, "--password-stdin", registry},
		strings.NewReader(password)); err != nil {
		return err
	}
	r.logins[registry] = true
	return nil
}
