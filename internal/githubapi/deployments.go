package githubapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v60/github"
)

// CreateDeployment records a deployment of ref to environment (GitHub Deployments API); it
// needs no status checks to pass, since the merge already did. When GitHub's answer is lost,
// an existing deployment of ref to environment with the same description is taken as this one.
func (c *Client) CreateDeployment(ctx context.Context, ref, environment, description string) (int64, error) {
	d, err := createOnce(ctx, func() (*github.Deployment, error) {
		d, _, err := c.gh.Repositories.CreateDeployment(ctx, c.owner, c.repo, &github.DeploymentRequest{
			Ref: &ref, Environment: &environment, Description: &description,
			AutoMerge: github.Bool(false), RequiredContexts: &[]string{},
		})
		return d, err
	}, func() (*github.Deployment, bool, error) {
		list, _, err := c.gh.Repositories.ListDeployments(ctx, c.owner, c.repo, &github.DeploymentsListOptions{
			Ref: ref, Environment: environment, ListOptions: github.ListOptions{PerPage: 100},
		})
		if err != nil {
			return nil, false, err
		}
		for _, d := range list {
			if d.GetDescription() == description {
				return d, true, nil
			}
		}
		return nil, false, nil
	})
	if err != nil {
		return 0, fmt.Errorf("create deployment of %s to %s: %w", ref, environment, err)
	}
	return d.GetID(), nil
}

// SetDeploymentStatus moves a deployment to state (in_progress, success, failure, error). It is
// retried like a read (5xx, a lost answer, with the client's backoff): a deployment is in the
// state of its latest status, so a status GitHub stored before its answer was lost, sent again,
// leaves the deployment where the first one did, whereas a status lost to one 502 would leave
// the deployment "in progress" for good.
func (c *Client) SetDeploymentStatus(ctx context.Context, id int64, state, logURL, description string) error {
	ctx = idempotent(ctx)
	_, _, err := c.gh.Repositories.CreateDeploymentStatus(ctx, c.owner, c.repo, id, &github.DeploymentStatusRequest{
		State: &state, LogURL: &logURL, Description: &description,
	})
	if err != nil {
		return fmt.Errorf("set deployment %d to %s: %w", id, state, err)
	}
	return nil
}
