package githubapi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
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
//
// A check run is never taken for this run's unless it is: when GitHub's answer to the create
// is lost, the check run found afterwards counts only if it carries this run's own external id
// (CheckRunExternalID with a run); one that earlier runs of the same review may share (the
// form without a run) is first updated to this run's verdict. When the check run cannot be
// created, the earlier runs' check runs of the same review on the commit are updated to this
// run's verdict instead, so none of them still shows an earlier verdict, and the answer is a
// *NotCreatedError saying so (its Update is set when even that failed).
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
	reviewID, runID := splitExternalID(run.ExternalID, run.HeadSHA)
	var shared []*github.CheckRun // found with an id earlier runs may share
	cr, err := createOnce(ctx, func() (*github.CheckRun, error) {
		cr, _, err := c.gh.Checks.CreateCheckRun(ctx, c.owner, c.repo, opts)
		return cr, err
	}, func() (*github.CheckRun, bool, error) {
		if run.ExternalID == "" {
			return nil, false, nil
		}
		all, err := c.checkRuns(ctx, run.Name, run.HeadSHA)
		if err != nil {
			return nil, false, err
		}
		var same []*github.CheckRun
		for _, cr := range all {
			if cr.GetExternalID() == run.ExternalID {
				same = append(same, cr)
			}
		}
		if len(same) == 0 {
			return nil, false, nil
		}
		if runID == "" {
			shared = same
		}
		return same[len(same)-1], true, nil
	})
	switch {
	case err != nil && (CannotWrite(err) || ctx.Err() != nil):
		return "", fmt.Errorf("create check run %q on %s: %w",
			run.Name, commitid.Short(run.HeadSHA, commitid.Unambiguous), err)
	case err != nil:
		return c.standIn(ctx, run, reviewID, err)
	case shared != nil:
		// Without a run in the id, the check run found may be this run's or an earlier one's:
		// either way it must say what this run concluded.
		if _, err := c.overwrite(ctx, run, shared); err != nil {
			return "", &NotCreatedError{Name: run.Name, HeadSHA: run.HeadSHA, Update: err,
				Create: errors.New("GitHub's answer was lost, and the check run found may be an earlier run's")}
		}
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

// standIn answers a create that failed: the check runs earlier runs of the same review left on
// the commit are updated to this run's verdict, so the commit shows no earlier verdict.
func (c *Client) standIn(ctx context.Context, run CheckRun, reviewID string, create error) (string, error) {
	fail := &NotCreatedError{Name: run.Name, HeadSHA: run.HeadSHA, Create: create}
	if run.ExternalID == "" {
		return "", fail
	}
	all, err := c.checkRuns(ctx, run.Name, run.HeadSHA)
	if err != nil {
		fail.Update = fmt.Errorf("list the check runs on the commit: %w", err)
		return "", fail
	}
	var earlier []*github.CheckRun
	for _, cr := range all {
		switch id, _ := splitExternalID(cr.GetExternalID(), run.HeadSHA); {
		case cr.GetExternalID() == run.ExternalID && run.ExternalID != reviewID:
			// Created after all, as the last look found: this run's own.
			return cr.GetHTMLURL(), nil
		case id == reviewID:
			earlier = append(earlier, cr)
		}
	}
	if len(earlier) == 0 {
		// Nothing on the commit speaks for this review: no verdict to correct.
		return "", fail
	}
	fail.Updated, fail.Update = c.overwrite(ctx, run, earlier)
	if len(fail.Updated) > 0 {
		fail.URL = earlier[len(fail.Updated)-1].GetHTMLURL()
	}
	return fail.URL, fail
}

// overwrite gives each check run this run's conclusion, title and summary (not its annotations,
// which would add to theirs), and returns the ids it updated, in order, until one failed.
func (c *Client) overwrite(ctx context.Context, run CheckRun, crs []*github.CheckRun) ([]int64, error) {
	opts := github.UpdateCheckRunOptions{Name: run.Name, Status: github.String("completed"),
		Conclusion: &run.Conclusion, Output: &github.CheckRunOutput{
			Title: &run.Title, Summary: github.String(cut(run.Summary, CheckTextLimit))}}
	if run.DetailsURL != "" {
		opts.DetailsURL = &run.DetailsURL
	}
	var done []int64
	for _, cr := range crs {
		if _, _, err := c.gh.Checks.UpdateCheckRun(ctx, c.owner, c.repo, cr.GetID(), opts); err != nil {
			return done, fmt.Errorf("update check run %d: %w", cr.GetID(), err)
		}
		done = append(done, cr.GetID())
	}
	return done, nil
}

// checkRuns lists every check run called name on sha, oldest first: all of them, not only the
// newest of the name that GitHub lists by default.
func (c *Client) checkRuns(ctx context.Context, name, sha string) ([]*github.CheckRun, error) {
	all, err := listAll(func(page int) ([]*github.CheckRun, *github.Response, error) {
		list, resp, err := c.gh.Checks.ListCheckRunsForRef(ctx, c.owner, c.repo, sha, &github.ListCheckRunsOptions{
			CheckName: &name, Filter: github.String("all"), ListOptions: github.ListOptions{PerPage: 100, Page: page},
		})
		if err != nil {
			return nil, resp, err
		}
		return list.CheckRuns, resp, nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(all, func(a, b *github.CheckRun) int { return cmp.Compare(a.GetID(), b.GetID()) })
	return all, nil
}

// NotCreatedError is CompleteCheckRun's answer when GitHub did not create this run's check run
// (or cannot be shown to have). Updated lists the check runs of earlier runs of the same review
// on the commit that now carry this run's verdict instead, URL the page of the newest of them;
// Update says why that failed (nil when it did not), when the commit may still show an earlier
// run's verdict.
type NotCreatedError struct {
	Name    string
	HeadSHA string
	Create  error
	Updated []int64
	URL     string
	Update  error
}

func (e *NotCreatedError) Error() string {
	what := fmt.Sprintf("create check run %q on %s: %v", e.Name, commitid.Short(e.HeadSHA, commitid.Unambiguous), e.Create)
	switch {
	case e.Update != nil:
		return fmt.Sprintf("%s; and the check runs earlier runs of this review left on that commit could not be "+
			"updated to this run's verdict (%v), so it may still show an earlier verdict: run this job again", what, e.Update)
	case len(e.Updated) == 1:
		return fmt.Sprintf("%s; check run %s, left on that commit by an earlier run of this review, "+
			"now carries this run's verdict instead", what, ids(e.Updated))
	case len(e.Updated) > 1:
		return fmt.Sprintf("%s; check runs %s, left on that commit by earlier runs of this review, "+
			"now carry this run's verdict instead", what, ids(e.Updated))
	}
	return what
}

// Unwrap gives both failures to errors.Is and errors.As.
func (e *NotCreatedError) Unwrap() []error { return []error{e.Create, e.Update} }

func ids(in []int64) string {
	s := make([]string, len(in))
	for i, id := range in {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

// maxExternalID bounds an external id. GitHub documents no limit; staying within 255 bytes,
// the usual size of such a column, keeps a long workflow, job or directory name from making the
// create fail.
const maxExternalID = 255

var runPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`) })

// CheckRunExternalID is the external id of a check run reporting review key on commit sha for
// workflow run run (ghaction's RunID, "<run id>.<attempt>"): "<key>@<sha>@<run>", unique to the
// run, so a check run found after a lost answer is known to be this run's and never an earlier
// one's. Without a run (outside Actions) it is "<key>@<sha>", which every run shares. A key too
// long for maxExternalID is replaced by "sha256:" and its digest's first 32 hex digits.
func CheckRunExternalID(key, sha, run string) string {
	tail := "@" + sha
	if runPattern().MatchString(run) {
		tail += "@" + run
	}
	if len(key)+len(tail) > maxExternalID {
		sum := sha256.Sum256([]byte(key))
		key = "sha256:" + hex.EncodeToString(sum[:16])
	}
	return key + tail
}

// splitExternalID parses an id CheckRunExternalID made for commit sha into the part every run
// of the review shares ("<key>@<sha>") and the run; run is "" for an id without one, and for
// an id cdkbot did not make, which is then its own review part.
func splitExternalID(id, sha string) (review, run string) {
	if i := strings.LastIndexByte(id, '@'); i >= 0 && runPattern().MatchString(id[i+1:]) &&
		strings.HasSuffix(id[:i], "@"+sha) && !strings.HasSuffix(id, "@"+sha) {
		return id[:i], id[i+1:]
	}
	return id, ""
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
