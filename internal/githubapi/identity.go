package githubapi

import (
	"context"
	"strings"
)

// Login returns the identity the token acts as, asked once through GraphQL's viewer, which
// answers for every kind of token: a user for a PAT, "github-actions" for the Actions token,
// the app's slug for a GitHub App installation token. (REST's GET /user answers 403 for both
// installation-token kinds, and both start with "ghs_", so neither tells them apart.)
func (c *Client) Login(ctx context.Context) (string, error) {
	if c.login != "" {
		return c.login, nil
	}
	var data struct {
		Viewer struct {
			Login string `json:"login"`
		} `json:"viewer"`
	}
	if err := c.graphql(ctx, "who am I (GraphQL viewer)", "query { viewer { login } }", nil, &data); err != nil {
		return "", err
	}
	c.login = data.Viewer.Login
	return c.login, nil
}

// SameLogin compares logins as GitHub shows them in different places: REST names a bot
// "<login>[bot]", GraphQL "<login>"; logins are case-insensitive.
func SameLogin(a, b string) bool {
	norm := func(s string) string { return strings.TrimSuffix(strings.ToLower(s), "[bot]") }
	return a != "" && norm(a) == norm(b)
}

// isMine is true for content written by the token's identity.
func (c *Client) isMine(ctx context.Context, author string) (bool, error) {
	login, err := c.Login(ctx)
	if err != nil {
		return false, err
	}
	return SameLogin(author, login), nil
}
