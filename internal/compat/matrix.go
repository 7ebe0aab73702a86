package compat

import "fmt"

// Age says whether a component predates the continuous-delivery protocol ("old": assets as stack
// parameters, the CDKToolkit bucket) or implements it ("new": asset manifests, bootstrap roles,
// versioned bootstrap stack).
type Age bool

// Component ages.
const (
	Old Age = false
	New Age = true
)

func (a Age) String() string {
	if a {
		return "new"
	}
	return "old"
}

// Combination is one cell of the compatibility matrix: the CLI that deploys, the framework that
// synthesizes, the bootstrap stack in the target environment, and the app (its cdk.json, which
// opts into new-style synthesis with a feature flag when it was created by a new init template).
type Combination struct {
	CLI, Framework, Bootstrap, App Age
}

func (c Combination) String() string {
	return fmt.Sprintf("CLI %s, framework %s, bootstrap %s, app %s", c.CLI, c.Framework, c.Bootstrap, c.App)
}

// Outcome is how a combination deploys.
type Outcome string

// Outcomes: the deployment protocol used, or an error.
const (
	Legacy Outcome = "1.0"   // assets as parameters, default credentials
	Modern Outcome = "2.0"   // asset manifests, bootstrap roles
	Fails  Outcome = "error" // cannot deploy; Action says what to do
)

// MatrixRow is one decided combination.
type MatrixRow struct {
	Combination
	Outcome Outcome
	Finding string // what happens, in one line
	Action  string // what the user does next; "" when nothing is needed
	// Decided marks the two rows the design left open ("can this work??"); their answers are
	// cdkbot's decision, documented here and tested.
	Decided bool
}

// Matrix is the CLI × framework × bootstrap × app matrix of the continuous-delivery design
// (design/cdk-bootstrap.md, "Backwards compatibility"), all 16 rows.
var Matrix = []MatrixRow{
	{Combination{Old, Old, Old, Old}, Legacy,
		"today's behaviour: legacy assets through the CDKToolkit bucket", "", false},
	{Combination{Old, Old, Old, New}, Legacy,
		"the old framework ignores the new-synthesis flag in cdk.json; legacy assets", "", false},
	{Combination{Old, Old, New, Old}, Legacy,
		"legacy assets; works because the new bootstrap stack keeps the old outputs (BucketName)", "", false},
	{Combination{Old, Old, New, New}, Legacy,
		"the old framework ignores the flag; legacy assets through the new bootstrap stack's preserved outputs", "", false},
	{Combination{Old, New, Old, Old}, Legacy,
		"the flag is not set, so the new framework synthesizes legacy assets", "", false},
	{Combination{Old, New, Old, New}, Fails,
		"the app opts into new-style synthesis, which this CLI cannot deploy; the framework refuses",
		"Upgrade the CDK CLI (aws-cdk) to a version that reads asset manifests, then run `cdk bootstrap` with it", true},
	{Combination{Old, New, New, Old}, Legacy,
		"the flag is not set: legacy assets through the new bootstrap stack's preserved outputs", "", false},
	{Combination{Old, New, New, New}, Fails,
		"the app opts into new-style synthesis, which this CLI cannot deploy",
		"Upgrade the CDK CLI (aws-cdk) to a version that reads asset manifests", false},
	{Combination{New, Old, Old, Old}, Legacy,
		"the CLI detects the old framework and uses legacy assets", "", false},
	{Combination{New, Old, Old, New}, Legacy,
		"the CLI detects the old framework and uses legacy assets; the flag is ignored", "", false},
	{Combination{New, Old, New, Old}, Legacy,
		"the CLI detects the old framework; legacy assets through the new bootstrap stack's preserved outputs", "", false},
	{Combination{New, Old, New, New}, Legacy,
		"the CLI detects the old framework; legacy assets through the new bootstrap stack's preserved outputs", "", false},
	{Combination{New, New, Old, Old}, Legacy,
		"the flag is not set: legacy assets; the old bootstrap stack is enough", "", false},
	{Combination{New, New, Old, New}, Fails,
		"synthesis succeeds in 2.0 mode, but the templates point at bootstrap resources that do not exist yet; " +
			"the deploy's bootstrap version check fails before any change",
		"Run `cdk bootstrap aws://ACCOUNT/REGION` with the new CLI in every target environment, then deploy", true},
	{Combination{New, New, New, Old}, Legacy,
		"the flag is not set: legacy assets through the new bootstrap stack's preserved outputs", "", false},
	{Combination{New, New, New, New}, Modern,
		"the target state: asset manifests, bootstrap roles, versioned bootstrap stack", "", false},
}

// Lookup returns the row of a combination.
func Lookup(c Combination) MatrixRow {
	for _, r := range Matrix {
		if r.Combination == c {
			return r
		}
	}
	panic("compat: matrix is missing " + c.String()) // the test proves all 16 rows exist
}
