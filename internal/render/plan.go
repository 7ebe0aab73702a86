package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// Stages groups a plan's stacks into the steps that can each run in parallel: by wave, then by
// dependency level, in plan order.
func Stages(p *deployplan.Plan) [][]deployplan.Stack {
	var out [][]deployplan.Stack
	for i, s := range p.Stacks {
		if i == 0 || s.Wave != p.Stacks[i-1].Wave || s.Level != p.Stacks[i-1].Level {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], s)
	}
	return out
}

// matrixJob is one job of a GitHub Actions matrix; the field names are what a workflow reads
// (matrix.asset, matrix.stack).
type matrixJob struct {
	Asset       string `json:"asset,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Stack       string `json:"stack,omitempty"`
	StackName   string `json:"stackName,omitempty"`
	Environment string `json:"environment,omitempty"`
}

type matrix struct {
	Include []matrixJob `json:"include"`
}

// PlanGitHubMatrix writes the plan as GitHub Actions matrices on one line (for $GITHUB_OUTPUT):
// {"assets": {"include": [one job per asset]}, "stages": [{"include": [one job per stack]}, …],
// "stageCount": N}. Each stage's stacks depend only on earlier stages, so stage k's jobs run in
// parallel once stage k-1's are done; assets go before every stage.
func PlanGitHubMatrix(w io.Writer, p *deployplan.Plan, pp *publishplan.Plan) error {
	out := struct {
		Assets     matrix   `json:"assets"`
		Stages     []matrix `json:"stages"`
		StageCount int      `json:"stageCount"`
	}{Assets: matrix{Include: []matrixJob{}}, Stages: []matrix{}}
	seen := map[string]bool{}
	for _, j := range pp.Jobs {
		if !seen[j.ID] { // `cdkbot publish ASSEMBLY ID` publishes the id from every manifest
			seen[j.ID] = true
			out.Assets.Include = append(out.Assets.Include, matrixJob{Asset: j.ID, Kind: string(j.Kind)})
		}
	}
	for _, stage := range Stages(p) {
		m := matrix{}
		for _, s := range stage {
			m.Include = append(m.Include, matrixJob{Stack: s.ID, StackName: s.StackName, Environment: s.Env})
		}
		out.Stages = append(out.Stages, m)
	}
	out.StageCount = len(out.Stages)
	return encodeJSON(w, out, "", false)
}

// PlanJSON writes the plan for machines: {"publish": the publish plan, "deploy": the deploy plan}.
func PlanJSON(w io.Writer, p *deployplan.Plan, pp *publishplan.Plan) error {
	return encodeJSON(w, map[string]any{"publish": pp, "deploy": p}, "  ", true)
}

// PlanText lists what a deploy would do: the assets, then each stage's stacks with their
// environment, role and how the template is delivered. Values from the assembly are cleaned.
func PlanText(w io.Writer, p *deployplan.Plan, pp *publishplan.Plan) error {
	ew := &errWriter{w: w}
	ew.printf("Publish %d asset(s)\n", len(pp.Jobs))
	for _, j := range pp.Jobs {
		ew.printf("  %-5s %s  (%s, %d destination(s))\n", j.Kind, Clean(shortID(j.ID)), Clean(j.Manifest),
			len(j.Destinations))
	}
	for i, stage := range Stages(p) {
		ew.printf("Stage %d:\n", i+1)
		for _, s := range stage {
			how := "inline template"
			switch {
			case s.Template.UploadBucket != "":
				how = "template uploaded to s3://" + s.Template.UploadBucket
			case s.Template.URL != "":
				how = "template from " + s.Template.URL
			}
			if s.Template.Mutated {
				how = "policy-mutated " + how
			}
			line := fmt.Sprintf("  %s → %s as %s, %s", Clean(s.ID), Clean(s.Env),
				Clean(or(s.AssumeRoleARN, "the current credentials")), Clean(how))
			if len(s.DependsOn) > 0 {
				line += "; after " + Clean(strings.Join(s.DependsOn, ", "))
			}
			ew.printf("%s\n", line)
		}
	}
	return ew.err
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
