package deployplan

import "time"

// Result of deploying one stack.
type Result string

// Results.
const (
	Deployed  Result = "deployed"
	NoChanges Result = "no changes"
	Failed    Result = "failed"
	// Refused is a change the approval rule stopped before any change set.
	Refused Result = "refused"
	// Skipped is a stack not deployed because a stack it depends on (or an earlier wave) failed.
	Skipped Result = "skipped"
)

// Outcome of one stack.
type Outcome struct {
	Stack       string        `json:"stack"` // qualified artifact id
	StackName   string        `json:"stackName,omitempty"`
	Environment string        `json:"environment,omitempty"`
	Result      Result        `json:"result"`
	Status      string        `json:"status,omitempty"` // final CloudFormation status
	Duration    time.Duration `json:"-"`
	Seconds     float64       `json:"seconds"`
	// Causes are the failed resource events, oldest first, when the deployment failed.
	Causes []string `json:"causes,omitempty"`
	// Error says why the stack failed; Reason why it was skipped.
	Error  string `json:"error,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Outputs are the stack's outputs after the deployment (also when nothing changed).
	Outputs map[string]string `json:"outputs,omitempty"`
	// APICalls counts the CloudFormation and SSM operations made for the stack (retries not
	// counted), so polling cost is visible.
	APICalls int64 `json:"apiCalls"`
}

// OK is true for the results that leave the stack as the assembly says.
func (r Result) OK() bool { return r == Deployed || r == NoChanges }

// Report is what a deployment tells its readers: every stack's outcome, the commit, the run to
// read the logs in, and the stacks whose templates differ from what was reviewed. It lives
// beside the outcomes so the flows that fill it and the views that render it share one type.
type Report struct {
	Key        string // the sticky comment's identity
	Revision   string
	RunURL     string
	Outcomes   []Outcome
	Unreviewed []string // "stack: why", from the review marker comparison
	// Refused says why nothing was deployed at all (on-unreviewed: refuse).
	Refused string
	// Seconds is the wall time of the run: publishing and deploying every stack.
	Seconds float64
	// ShowOutputs puts stack output values in the Markdown (a PR comment is public to everyone
	// who reads the repository); otherwise only their names, and where the values are.
	ShowOutputs bool
}

// Failed is true when any stack did not end as the assembly says.
func (r Report) Failed() bool {
	if r.Refused != "" {
		return true
	}
	for _, o := range r.Outcomes {
		if !o.Result.OK() {
			return true
		}
	}
	return false
}

// Event is one stack event, reported once as it is seen.
type Event struct {
	Stack, LogicalID, ResourceType, Status, Reason string
}

// Phase of a stack in a run.
type Phase string

// Phases before a result.
const (
	Publishing Phase = "publishing" // its assets (BeforeStack)
	Deploying  Phase = "deploying"
	Finished   Phase = "finished" // Outcome is set
)

// Progress is a stack's phase change.
type Progress struct {
	Stack   string
	Phase   Phase
	Outcome *Outcome // when Finished
}
