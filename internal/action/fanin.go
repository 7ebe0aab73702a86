package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cdkbot/cdkbot/internal/apps"
	"github.com/cdkbot/cdkbot/internal/githubapi"
	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/render"
)

// FanInRequest is the fan-in of a review fanned out over apps and environments: the plan the
// fan-out printed (which legs there are; made without running pull request code) and the
// report files the legs left (written where pull request code ran: data, checked here).
type FanInRequest struct {
	PR       int    // the pull request (0: none; nothing is posted)
	HeadSHA  string // its head, which every leg's review must be of
	Plan     render.FanOut
	Files    []pipeline.LegFile
	Notes    []string // what reading the files skipped
	Comment  string   // "" keeps one sticky comment; "new" writes a new one each run; "off" none
	ReadOnly bool     // the token cannot write (a fork's pull request): the job summary only
	// Verified is true when the reports came from the pull request's own workflow run (not a
	// fork's): then they are as trusted as the comments its legs would have posted themselves,
	// and the combined comment records each leg's review for the merge deploy of that leg.
	Verified bool
	Gate     Gate
}

// FanIn posts the combined review: ONE sticky comment (keyed by the plan's key) with a section
// per app and environment, ONE check run with the combined verdict and an annotation per
// blocking gate and per leg without a valid report, the job summary and the output failed.
// A leg that failed or sent nothing blocks the verdict: it returns ErrBlocked.
func FanIn(ctx context.Context, d Deps, in FanInRequest) error {
	c := CombineReports(in)
	var full bytes.Buffer
	if err := render.FanInMarkdown(&full, c, SummaryLimit); err != nil {
		return err
	}
	d.Runner.Summary(full.String())
	d.Runner.Output("failed", strconv.FormatBool(c.Failed()))
	switch {
	case in.Comment == "off" || in.PR == 0:
	case in.ReadOnly:
		d.Runner.Notice("cdkbot: this token cannot comment; the combined review is in the job summary")
	default:
		if err := postFanIn(ctx, d, in.PR, c, in.Comment == "new"); err != nil {
			return err
		}
	}
	if !in.ReadOnly {
		fanInCheckRun(ctx, d, in.Gate, c)
	}
	for _, s := range c.Sections {
		if s.Outcome == apps.Gone {
			d.Runner.Warning("cdkbot: %s is removed by this change: cdkbot deletes no stack, so what it deployed "+
				"stays deployed", render.Clean(sectionName(s)))
		}
	}
	if !c.Failed() {
		return nil
	}
	for _, s := range c.Sections {
		switch s.Outcome {
		case apps.Blocked:
			d.Runner.Error("cdkbot: %s blocks this change", render.Clean(sectionName(s)))
		case apps.Missing, apps.Invalid:
			d.Runner.Error("cdkbot: %s: %s", render.Clean(sectionName(s)), render.Clean(s.Problem))
		}
	}
	return ErrBlocked
}

// CombineReports reads the legs' report files and matches them to the plan (apps.Combine). A
// file that is not a report cdkbot writes, or is for another pull request, counts for no leg,
// with a note; a leg's head commit is the one its comment's marker names.
func CombineReports(in FanInRequest) apps.Combined {
	var reports []apps.Report
	notes := append([]string(nil), in.Notes...)
	for _, f := range in.Files {
		var r SavedReport
		var m render.Marker
		ok := false
		err := json.Unmarshal(f.Raw, &r)
		if err == nil {
			m, ok = render.ParseMarker(r.Comment)
		}
		switch {
		case err != nil || !ok || r.Key == "" || m.Key != r.Key:
			notes = append(notes, fmt.Sprintf("%s is not a report file cdkbot writes: left out", f.Path))
			continue
		case in.PR != 0 && r.PullRequest != in.PR:
			notes = append(notes, fmt.Sprintf("%s is of pull request #%d, not #%d: left out", f.Path, r.PullRequest, in.PR))
			continue
		}
		if m.StacksDigest != "" && len(m.Stacks) == 0 && len(r.Identities) > 0 {
			// The leg's identities did not fit its marker: the report carries them, and they
			// count only when they are what the marker's digest says.
			if render.IdentitiesDigest(r.Identities) == m.StacksDigest {
				m.Stacks, m.StacksDigest, m.IdentityParts = r.Identities, "", 0
			} else {
				notes = append(notes, fmt.Sprintf("%s: its stacks' identities do not match its marker's digest: "+
					"the deploy of that leg will refuse", f.Path))
			}
		}
		record, _ := json.Marshal(m) // what cdkbot reads of the marker, nothing else
		reports = append(reports, apps.Report{Key: r.Key, HeadSHA: m.HeadSHA, Failed: r.Failed || m.Blocked,
			Review: r.Review, Record: record, Source: f.Path})
	}
	c := apps.Combine(in.Plan.Plan, in.HeadSHA, reports)
	c.Notes = append(notes, c.Notes...)
	c.Verified = in.Verified
	return c
}

func sectionName(s apps.Section) string {
	if s.Environment == "" {
		return s.App
	}
	return s.App + " (" + s.Environment + ")"
}

// postFanIn writes the one sticky comment (upsertSized), the legs' records it names first.
func postFanIn(ctx context.Context, d Deps, number int, c apps.Combined, alwaysNew bool) error {
	posted := map[string]bool{} // the identity parts already on the pull request, by body
	return upsertSized(ctx, d, number, c.Key, alwaysNew, "combined review",
		func(budget int) (string, error) {
			var body bytes.Buffer
			err := render.FanInMarkdown(&body, c, budget)
			return body.String(), err
		},
		func(budget int) error {
			return postFanInIdentities(ctx, d, number, render.FanInIdentityComments(c, budget), posted)
		})
}

// maxFanInIdentityComments bounds the comments the legs' pooled deploy identities may take (about
// 400 stacks each): far more stacks than a matrix of 256 legs deploys.
const maxFanInIdentityComments = 64

// postFanInIdentities keeps the comments that hold the legs' deploy identities, pooled, when the
// combined comment keeps only their digest (postIdentityParts).
func postFanInIdentities(ctx context.Context, d Deps, number int, parts []string, posted map[string]bool) error {
	if len(parts) > maxFanInIdentityComments {
		// The reports are data: they cannot make cdkbot flood the pull request with comments.
		d.Runner.Warning("cdkbot: the legs' deploy identities would take %d comments, over cdkbot's %d: none "+
			"posted, and a merge deploy of a leg that needs them will refuse", len(parts), maxFanInIdentityComments)
		return nil
	}
	return postIdentityParts(ctx, d, number, parts, posted, "the legs' deploy identities")
}

// maxFanInAnnotations bounds the check run's annotations (GitHub takes them 50 per request).
const maxFanInAnnotations = 200

// fanInCheckRun reports the combined verdict as one check run on the head (postCheckRun).
func fanInCheckRun(ctx context.Context, d Deps, g Gate, c apps.Combined) {
	if g.CheckName == "off" {
		return
	}
	var summary bytes.Buffer
	if err := render.FanInMarkdown(&summary, c, githubapi.CheckTextLimit-1024); err != nil {
		d.Runner.Warning("cdkbot: could not render the check run: %v", err)
		return
	}
	postCheckRun(ctx, d, g, githubapi.CheckRun{HeadSHA: c.HeadSHA,
		ExternalID: githubapi.CheckRunExternalID(c.Key, c.HeadSHA, g.Run), Title: render.FanInHeadline(c),
		Summary: summary.String(), Annotations: fanInAnnotations(c)}, c.Failed())
}

// fanInAnnotations point each blocking gate of each leg, and each leg without a valid report,
// at that app's cdk.json.
func fanInAnnotations(c apps.Combined) []githubapi.Annotation {
	var out []githubapi.Annotation
	add := func(s apps.Section, title, msg string) {
		if len(out) < maxFanInAnnotations {
			path := "cdk.json"
			if s.Dir != "" {
				path = s.Dir + "/cdk.json"
			}
			out = append(out, githubapi.Annotation{Path: path, StartLine: 1, Level: "failure",
				Title: render.Clean(title), Message: render.Clean(msg)})
		}
	}
	for _, s := range c.Sections {
		switch s.Outcome {
		case apps.Missing, apps.Invalid:
			add(s, "cdkbot "+sectionName(s)+": "+s.Outcome.String(), s.Problem)
		case apps.Blocked:
			var r struct {
				Gates []struct {
					Name                            string
					Triggered, Enforced, Overridden bool
					Items                           []string
				} `json:"gates"`
			}
			before := len(out)
			_ = json.Unmarshal(s.Review, &r) // unreadable: no gates, the fallback below
			for _, g := range r.Gates {
				if g.Triggered && g.Enforced && !g.Overridden {
					for _, it := range g.Items {
						add(s, fmt.Sprintf("cdkbot %s gate %.40s", sectionName(s), g.Name), fmt.Sprintf("%.300s", it))
					}
				}
			}
			if len(out) == before {
				add(s, "cdkbot "+sectionName(s), "its review is blocked (its job summary says why)")
			}
		}
	}
	return out
}
