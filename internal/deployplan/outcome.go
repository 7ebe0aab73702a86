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
