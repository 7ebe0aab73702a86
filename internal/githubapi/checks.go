package githubapi

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"

	"github.com/cdkbot/cdkbot/internal/commitid"
)

// Checks API limits.
const (
	CheckTextLimit       = 65535 // characters of a check run's summary or text
	AnnotationsPerUpdate = 50
)

// CheckRun is a finished check run: the verdict branch protection and merge queues key on.
type CheckRun struct {
	Name       string
	HeadSHA    string
	Conclusion string // success, failure, neutral, …
	Title      string
	Summary    string // Markdown, cut to CheckTextLimit
	DetailsURL string
	ExternalID string
	// Annotations are sent 50 per request, as the Checks API takes them.
	Annotations []Annotation
}

// Annotation points a finding at a file line.
type Annotation struct {
	Path      string
	StartLine int
	EndLine   int
	Level     string // notice, warning, failure
	Title     string
	Message   string
}

// CompleteCheckRun creates the check run, completed, with the first 50 annotations, and adds
// the rest 50 per update. It returns the check run's page.
func (c *Client) CompleteCheckRun(ctx context.Context, run CheckRun) (string, error) {
	first, rest := chunk(run.Annotations)
	output := &github.CheckRunOutput{
		Title: &run.Title, Summary: github.String(cut(run.Summary, CheckTextLimit)), Annotations: annotations(first),
	}
	opts := github.CreateCheckRunOptions{Name: run.Name, HeadSHA: run.HeadSHA, Status: github.String("completed"),
		Conclusion: &run.Conclusion, Output: output}
	if run.DetailsURL != "" {
		opts.DetailsURL = &run.DetailsURL
	}
	if run.ExternalID != "" {
		opts.ExternalID = &run.ExternalID
	}
	cr, err := createOnce(ctx, func() (*github.CheckRun, error) {
		cr, _, err := c.gh.Checks.CreateCheckRun(ctx, c.owner, c.repo, opts)
		return cr, err
	}, func() (*github.CheckRun, bool, error) {
		if run.ExternalID == "" {
			return nil, false, nil
		}
		list, _, err := c.gh.Checks.ListCheckRunsForRef(ctx, c.owner, c.repo, run.HeadSHA, &github.ListCheckRunsOptions{
			CheckName: &run.Name, ListOptions: github.ListOptions{PerPage: 100},
		})
		if err != nil {
			return nil, false, err
		}
		for _, cr := range list.CheckRuns {
			if cr.GetExternalID() == run.ExternalID {
				return cr, true, nil
			}
		}
		return nil, false, nil
	})
	if err != nil {
		return "", fmt.Errorf("create check run %q on %s: %w",
			run.Name, commitid.Short(run.HeadSHA, commitid.Unambiguous), err)
	}
	for len(rest) > 0 {
		var next []Annotation
		next, rest = chunk(rest)
		_, _, err := c.gh.Checks.UpdateCheckRun(ctx, c.owner, c.repo, cr.GetID(), github.UpdateCheckRunOptions{Name: run.Name,
			Output: &github.CheckRunOutput{Title: &run.Title, Summary: output.Summary, Annotations: annotations(next)}})
		if err != nil {
			return cr.GetHTMLURL(), fmt.Errorf("add annotations to check run %d: %w", cr.GetID(), err)
		}
	}
	return cr.GetHTMLURL(), nil
}

func chunk(a []Annotation) (first, rest []Annotation) {
	if len(a) <= AnnotationsPerUpdate {
		return a, nil
	}
	return a[:AnnotationsPerUpdate], a[AnnotationsPerUpdate:]
}

func annotations(in []Annotation) []*github.CheckRunAnnotation {
	var out []*github.CheckRunAnnotation
	for _, a := range in {
		end := a.EndLine
		if end < a.StartLine {
			end = a.StartLine
		}
		out = append(out, &github.CheckRunAnnotation{
			Path: github.String(a.Path), StartLine: github.Int(a.StartLine), EndLine: github.Int(end),
			AnnotationLevel: github.String(a.Level), Title: github.String(cut(a.Title, 255)),
			Message: github.String(cut(a.Message, 64<<10-1)),
		})
	}
	return out
}

// cut shortens s to at most n characters, on a character boundary.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n-1]) + "…"
}
