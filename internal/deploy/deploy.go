// Package deploy executes a deploy plan against CloudFormation: per stack it acts as the
// stack's deploy role, checks the environment's bootstrap version, skips a stack whose
// deployed template and parameters are unchanged, and otherwise creates, executes and follows
// a change set to a terminal status, reporting the events that explain a failure.
package deploy

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/cfnstatus"
	"github.com/cdkbot/cdkbot/internal/deployplan"
)

// The outcome vocabulary lives with the plan, so views can render it; aliased here for callers.
type (
	Result  = deployplan.Result
	Outcome = deployplan.Outcome
)

// Results, re-exported.
const (
	Deployed  = deployplan.Deployed
	NoChanges = deployplan.NoChanges
	Failed    = deployplan.Failed
	Refused   = deployplan.Refused
	Skipped   = deployplan.Skipped
)

// Event, Phase and Progress are what a view hears as a run goes; they live with the plan.
type (
	Event    = deployplan.Event
	Phase    = deployplan.Phase
	Progress = deployplan.Progress
)

// Deployer deploys stacks of one assembly.
type Deployer struct {
	Sessions *awsconfig.Sessions
	// ReadTemplate returns a template's bytes by its root-relative path (required).
	ReadTemplate func(path string) ([]byte, error)
	// Events, when set, receives each stack event once.
	Events func(Event)
	// Poll is the first interval between status checks, growing while nothing changes up to
	// MaxPoll; zero means 1 s and 5 s (the CDK CLI polls every 5 s).
	Poll, MaxPoll time.Duration
	// BusyTimeout bounds the wait for a stack another operation is updating; zero means 30 min.
	BusyTimeout time.Duration
	// Timeout bounds one stack's deployment (change set and execution); zero means 1 hour.
	Timeout time.Duration
	// Concurrency is the number of stacks deployed at once by Run; zero means 4.
	Concurrency int
	// Progress, when set, hears each stack's phase changes.
	Progress func(Progress)
	// BeforeStack, when set, runs in the stack's slot once what it depends on has deployed:
	// publishing its assets, so a slow asset holds up only the stacks that need it. An error
	// fails the stack.
	BeforeStack func(ctx context.Context, s deployplan.Stack) error
	// Approve, when set, decides whether a change may go ahead before any change set is
	// created: deployed is the stack's current template (nil for a new stack).
	Approve func(s deployplan.Stack, deployed, proposed []byte) error
}

// Phases before a result, re-exported.
const (
	Publishing = deployplan.Publishing
	Deploying  = deployplan.Deploying
	Finished   = deployplan.Finished
)

// BootstrapError is an environment whose bootstrap stack is missing or too old.
type BootstrapError struct {
	Env, Parameter string
	Have, Need     int
}

func (e *BootstrapError) Error() string {
	have := "not bootstrapped (no " + e.Parameter + " parameter)"
	if e.Have > 0 {
		have = "bootstrapped with version " + strconv.Itoa(e.Have)
	}
	return fmt.Sprintf("%s is %s; this assembly needs version %d or later: run `cdk bootstrap %s`",
		e.Env, have, e.Need, e.Env)
}

// limit is the time one stack may take, for publishing its assets and again for deploying it.
func (d *Deployer) limit() time.Duration {
	if d.Timeout == 0 {
		return time.Hour
	}
	return d.Timeout
}

// Deploy deploys one stack of the plan, within the time limit for one stack.
func (d *Deployer) Deploy(ctx context.Context, s deployplan.Stack) (Outcome, error) {
	start := time.Now()
	limit := d.limit()
	tctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	sd := &stackDeploy{d: d, s: s, out: Outcome{Stack: s.ID, Result: Failed}}
	err := sd.run(tctx)
	return sd.finish(err, start, limit, tctx.Err() != nil && ctx.Err() == nil)
}

// stackDeploy is one stack's deployment under way: what each phase learns that a later phase,
// or the outcome, needs.
type stackDeploy struct {
	d        *Deployer
	s        deployplan.Stack
	cfg      aws.Config
	cfn      *cloudformation.Client
	calls    atomic.Int64    // the API calls made for the stack, for the outcome
	deployed *cfntypes.Stack // what runs now; nil when the stack is (to be) created
	// exists is true while the stack exists, possibly only as an unexecuted change set, which
	// may be a leftover of an earlier attempt.
	exists bool
	out    Outcome // Failed until a phase decides otherwise
}

// run takes the stack through its phases in order; the first error ends the deployment.
func (sd *stackDeploy) run(ctx context.Context) error {
	if err := sd.connect(ctx); err != nil {
		return err
	}
	if err := sd.readDeployed(ctx); err != nil {
		return err
	}
	body, url, err := sd.d.template(sd.s)
	if err != nil {
		return err
	}
	current, same, err := sd.upToDate(ctx, body)
	if err != nil {
		return err
	}
	if same {
		return nil
	}
	if err := sd.expected(current); err != nil {
		sd.out.Result = Refused
		return err
	}
	if sd.d.Approve != nil {
		if err := sd.d.Approve(sd.s, current, body); err != nil {
			sd.out.Result = Refused
			return err
		}
	}
	csID, err := sd.createChangeSet(ctx, body, url)
	if err != nil {
		return err
	}
	empty, err := sd.d.waitChangeSet(ctx, sd.cfn, sd.s, csID)
	if err != nil {
		return err
	}
	if empty && sd.deployed != nil { // a creation is never empty: execute it
		sd.discardEmpty(ctx, csID)
		// Termination protection is no part of a change set: a change to it alone still applies.
		changed, err := sd.protect(ctx)
		if changed {
			sd.out.Result = Deployed
		}
		return err
	}
	if err := sd.execute(ctx, csID); err != nil {
		return err
	}
	if _, err := sd.protect(ctx); err != nil {
		return err
	}
	sd.out.Result = Deployed
	return nil
}

// finish stamps the outcome with the time and calls the stack took, and makes the error say
// which stack failed and, when the time limit cut it short, that it may still finish.
func (sd *stackDeploy) finish(err error, start time.Time, limit time.Duration, timedOut bool) (Outcome, error) {
	sd.out.Duration = time.Since(start).Round(time.Millisecond)
	sd.out.Seconds = sd.out.Duration.Seconds()
	sd.out.APICalls = sd.calls.Load()
	if err != nil {
		if timedOut {
			err = fmt.Errorf("gave up after %s (the stack is %s; it may still finish in CloudFormation): %w",
				limit, sd.out.Status, err)
		}
		err = fmt.Errorf("stack %s (%s): %w", sd.s.ID, sd.s.Env, err)
		sd.out.Error = err.Error()
	}
	return sd.out, err
}

// connect acts as the stack's deploy role and checks the environment's bootstrap version
// before anything touches the stack, so an unbootstrapped account fails with what to run.
// Every client counts its calls for the outcome.
func (sd *stackDeploy) connect(ctx context.Context) error {
	cfg, err := sd.d.Sessions.For(ctx, awsconfig.Role{
		ARN: sd.s.AssumeRoleARN, ExternalID: sd.s.AssumeRoleExternalID, Region: sd.s.Environment.Region,
	})
	if err != nil {
		return err
	}
	sd.cfg = cfg
	if sd.s.Bootstrap != nil {
		client := ssm.NewFromConfig(cfg, func(o *ssm.Options) {
			o.APIOptions = append(o.APIOptions, counting(&sd.calls))
		})
		if err := checkBootstrap(ctx, client, sd.s); err != nil {
			return err
		}
	}
	sd.cfn = cloudformation.NewFromConfig(cfg, func(o *cloudformation.Options) {
		o.APIOptions = append(o.APIOptions, counting(&sd.calls))
	})
	return nil
}

// readDeployed learns what the stack runs, once no other operation is changing it, and decides
// whether the deployment creates or updates it.
func (sd *stackDeploy) readDeployed(ctx context.Context) error {
	deployed, err := sd.d.describeIdle(ctx, sd.cfn, sd.s)
	if err != nil {
		return err
	}
	sd.deployed, sd.exists = deployed, deployed != nil
	if deployed == nil {
		return nil
	}
	switch deployed.StackStatus {
	case cfntypes.StackStatusRollbackComplete, cfntypes.StackStatusRollbackFailed:
		// A stack whose creation failed cannot be updated: delete it and create it again.
		if err := sd.d.deleteFailed(ctx, sd.cfn, sd.s.StackName); err != nil {
			return err
		}
		sd.deployed, sd.exists = nil, false // gone, with its change sets
	case cfntypes.StackStatusReviewInProgress:
		sd.deployed = nil // created by a change set never executed: still a creation
	}
	return nil
}

// upToDate is the no-change fast path: a stack that already runs this template with these
// settings needs no change set, so it finishes with no changes. It also returns the deployed
// template, for Approve (nil for a new stack).
func (sd *stackDeploy) upToDate(ctx context.Context, body []byte) (current []byte, same bool, err error) {
	if sd.deployed == nil {
		return nil, false, nil
	}
	same, current, err = unchanged(ctx, sd.cfn, sd.s, sd.deployed, body)
	if err != nil {
		return nil, false, err
	}
	if same {
		sd.out.Result, sd.out.Status, sd.out.Outputs = NoChanges, string(sd.deployed.StackStatus), outputs(sd.deployed)
	}
	return current, same, nil
}

// expected refuses a stack that does not run what its review compared with (Stack.Running): the
// deploy would then also make a change nobody was shown — an earlier merge that did not deploy,
// a change made outside cdkbot. current is the deployed template (nil for a new stack).
func (sd *stackDeploy) expected(current []byte) error {
	e := sd.s.Running
	switch {
	case e == nil, sd.deployed == nil:
		return nil // no expectation, or nothing running to change behind the review's back
	case e.Absent:
		return fmt.Errorf("it already runs, but its review compared with a base that had no such stack: the deploy " +
			"would change what runs in ways the review did not show. Review the change against what runs " +
			"(deployed: required), or deploy what runs first")
	}
	sum := sha256.Sum256(bytes.TrimSpace(current))
	if hex.EncodeToString(sum[:16]) != e.Digest {
		return fmt.Errorf("it runs a template other than the base its review compared with (an earlier change that " +
			"did not deploy, or one made outside cdkbot), so the deploy would also make changes the review did not " +
			"show. Deploy or revert those first, or review the change against what runs (deployed: required)")
	}
	return nil
}

// createChangeSet creates the stack's change set and returns its ARN: from here the change set
// is named by it, unambiguous where a name is only unique per stack (moto even resolves a bare
// name across stacks).
func (sd *stackDeploy) createChangeSet(ctx context.Context, body []byte, url string) (string, error) {
	s := sd.s
	if s.Template.UploadBucket != "" {
		// A legacy template too large to inline goes to the staging bucket first, as the CDK CLI does.
		if _, err := awsconfig.S3(sd.cfg).PutObject(ctx, &s3.PutObjectInput{
			Bucket: &s.Template.UploadBucket, Key: &s.Template.UploadKey, Body: bytes.NewReader(body),
		}); err != nil {
			return "", fmt.Errorf("upload the template to s3://%s/%s: %s",
				s.Template.UploadBucket, s.Template.UploadKey, awsconfig.Explain(err))
		}
	}
	in := changeSetInput(s, sd.deployed != nil, body, url)
	if sd.exists {
		// A change set left by an earlier attempt of the same revision is replaced.
		if err := deleteLeftover(ctx, sd.cfn, s); err != nil {
			return "", err
		}
	}
	created, err := sd.cfn.CreateChangeSet(ctx, in)
	if err != nil {
		return "", fmt.Errorf("create change set: %s", awsconfig.Explain(err))
	}
	return cmp.Or(aws.ToString(created.Id), s.ChangeSetName), nil
}

// changeSetInput asks for the stack's change set: an update of a stack that runs, else a
// creation, with the capabilities a CDK template may need.
func changeSetInput(s deployplan.Stack, update bool, body []byte, url string) *cloudformation.CreateChangeSetInput {
	csType := cfntypes.ChangeSetTypeCreate
	if update {
		csType = cfntypes.ChangeSetTypeUpdate // moto needs it explicit for an existing stack
	}
	in := &cloudformation.CreateChangeSetInput{
		StackName: &s.StackName, ChangeSetName: &s.ChangeSetName, ChangeSetType: csType,
		Capabilities: []cfntypes.Capability{
			cfntypes.CapabilityCapabilityIam, cfntypes.CapabilityCapabilityNamedIam, cfntypes.CapabilityCapabilityAutoExpand,
		},
		Parameters: parameters(s.Parameters), Tags: tags(s.Tags), NotificationARNs: s.NotificationARNs,
	}
	if s.ExecutionRoleARN != "" {
		in.RoleARN = &s.ExecutionRoleARN
	}
	if url != "" {
		in.TemplateURL = &url
	} else {
		in.TemplateBody = aws.String(string(body))
	}
	return in
}

// discardEmpty deletes an update's change set that CloudFormation found changes nothing (the
// fast path compares text, CloudFormation what the stack would do), so no pending change set is
// left behind, and the stack reports no changes.
func (sd *stackDeploy) discardEmpty(ctx context.Context, csID string) {
	_, _ = sd.cfn.DeleteChangeSet(ctx, &cloudformation.DeleteChangeSetInput{
		StackName: &sd.s.StackName, ChangeSetName: &csID,
	})
	sd.out.Result = NoChanges
	sd.out.Status, sd.out.Outputs = string(sd.deployed.StackStatus), outputs(sd.deployed)
}

// execute runs the change set and follows the stack to a terminal status, recording the status,
// the failed events' reasons and the outputs even when it fails, for the report.
func (sd *stackDeploy) execute(ctx context.Context, csID string) error {
	since := time.Now().Add(-time.Second)
	if _, err := sd.cfn.ExecuteChangeSet(ctx, &cloudformation.ExecuteChangeSetInput{
		StackName: &sd.s.StackName, ChangeSetName: &csID,
	}); err != nil {
		return fmt.Errorf("execute change set: %s", awsconfig.Explain(err))
	}
	final, causes, err := sd.d.follow(ctx, sd.cfn, sd.s, since)
	status := "DELETE_COMPLETE"
	if final != nil {
		status = string(final.StackStatus)
	}
	sd.out.Status, sd.out.Causes, sd.out.Outputs = status, causes, outputs(final)
	if err != nil {
		return err
	}
	if final == nil {
		return fmt.Errorf("the stack was deleted during the deployment (its creation failed and rolled back): %s",
			strings.Join(causes, "; "))
	}
	if !strings.HasSuffix(status, "_COMPLETE") || strings.Contains(status, "ROLLBACK") {
		return fmt.Errorf("ended %s: %s", status, strings.Join(causes, "; "))
	}
	return nil
}

// protect sets termination protection as the plan says (a change set cannot carry it), only
// when it differs from what the stack has (a new stack has none).
func (sd *stackDeploy) protect(ctx context.Context) (changed bool, err error) {
	have := sd.deployed != nil && aws.ToBool(sd.deployed.EnableTerminationProtection)
	if have == sd.s.TerminationProtection {
		return false, nil
	}
	if _, err := sd.cfn.UpdateTerminationProtection(ctx, &cloudformation.UpdateTerminationProtectionInput{
		StackName: &sd.s.StackName, EnableTerminationProtection: &sd.s.TerminationProtection}); err != nil {
		return false, fmt.Errorf("update termination protection: %s", awsconfig.Explain(err))
	}
	return true, nil
}

func deleteLeftover(ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack) error {
	p := cloudformation.NewListChangeSetsPaginator(cfn, &cloudformation.ListChangeSetsInput{StackName: &s.StackName})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list change sets: %s", awsconfig.Explain(err))
		}
		for _, cs := range page.Summaries {
			if aws.ToString(cs.ChangeSetName) == s.ChangeSetName {
				id := cmp.Or(aws.ToString(cs.ChangeSetId), s.ChangeSetName)
				if _, err := cfn.DeleteChangeSet(ctx, &cloudformation.DeleteChangeSetInput{
					StackName: &s.StackName, ChangeSetName: &id,
				}); err != nil {
					return fmt.Errorf("delete the leftover change set %s: %s", s.ChangeSetName, awsconfig.Explain(err))
				}
			}
		}
	}
	return nil
}

func checkBootstrap(ctx context.Context, client *ssm.Client, s deployplan.Stack) error {
	out, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: &s.Bootstrap.Parameter})
	var nf *ssmtypes.ParameterNotFound
	switch {
	case errors.As(err, &nf):
		return &BootstrapError{Env: s.Env, Parameter: s.Bootstrap.Parameter, Need: s.Bootstrap.MinVersion}
	case err != nil:
		return fmt.Errorf("read bootstrap version %s: %s", s.Bootstrap.Parameter, awsconfig.Explain(err))
	}
	have, err := strconv.Atoi(aws.ToString(out.Parameter.Value))
	if err != nil {
		return fmt.Errorf("bootstrap version %s is %q, not a number",
			s.Bootstrap.Parameter, aws.ToString(out.Parameter.Value))
	}
	if have < s.Bootstrap.MinVersion {
		return &BootstrapError{Env: s.Env, Parameter: s.Bootstrap.Parameter, Have: have, Need: s.Bootstrap.MinVersion}
	}
	return nil
}

func describe(ctx context.Context, cfn *cloudformation.Client, name string) (*cfntypes.Stack, error) {
	out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: &name})
	if err != nil {
		if cfnstatus.StackMissing(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("describe stack %s: %s", name, awsconfig.Explain(err))
	}
	if len(out.Stacks) == 0 || out.Stacks[0].StackStatus == cfntypes.StackStatusDeleteComplete {
		return nil, nil
	}
	return &out.Stacks[0], nil
}

// template returns the template's bytes (for the inline body, an upload and the no-change
// comparison) and the URL to read it from when it is not inline.
func (d *Deployer) template(s deployplan.Stack) ([]byte, string, error) {
	if d.ReadTemplate == nil && s.Template.Body == nil {
		return nil, "", errors.New("no template reader configured")
	}
	b := s.Template.Body // the policy-mutated template, when the policy changes it
	if b == nil {
		var err error
		if b, err = d.ReadTemplate(s.Template.Path); err != nil {
			return nil, "", err
		}
	}
	if s.Template.Inline {
		return b, "", nil
	}
	if s.Template.URL == "" {
		return nil, "", errors.New("the plan has no way to deliver the template")
	}
	return b, s.Template.URL, nil
}

// unchanged is the no-change fast path: same template, parameters, tags and termination
// protection as deployed means no change set at all.
func unchanged(
	ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack, deployed *cfntypes.Stack, body []byte,
) (bool, []byte, error) {
	got, err := cfn.GetTemplate(ctx, &cloudformation.GetTemplateInput{
		StackName: &s.StackName, TemplateStage: cfntypes.TemplateStageOriginal,
	})
	if err != nil {
		return false, nil, fmt.Errorf("read the deployed template: %s", awsconfig.Explain(err))
	}
	current := []byte(aws.ToString(got.TemplateBody))
	if !strings.HasSuffix(string(deployed.StackStatus), "_COMPLETE") ||
		strings.Contains(string(deployed.StackStatus), "ROLLBACK") {
		return false, current, nil
	}
	if !bytes.Equal(bytes.TrimSpace(current), bytes.TrimSpace(body)) {
		return false, current, nil
	}
	have := map[string]string{}
	for _, p := range deployed.Parameters {
		have[aws.ToString(p.ParameterKey)] = aws.ToString(p.ParameterValue)
	}
	for k, v := range s.Parameters {
		if have[k] != v {
			return false, current, nil
		}
	}
	tagsHave := map[string]string{}
	for _, t := range deployed.Tags {
		tagsHave[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	if !maps.Equal(tagsHave, s.Tags) && len(tagsHave)+len(s.Tags) > 0 {
		return false, current, nil
	}
	if !slices.Equal(slices.Sorted(slices.Values(deployed.NotificationARNs)),
		slices.Sorted(slices.Values(s.NotificationARNs))) {
		return false, current, nil
	}
	return aws.ToBool(deployed.EnableTerminationProtection) == s.TerminationProtection, current, nil
}

// waitChangeSet waits for the change set to be created; it reports an empty one. Empty is
// CloudFormation's verdict (FAILED, "didn't contain changes"), never an empty Changes list: a
// change set that only adds or changes Outputs (a new export another stack is about to import)
// lists no resource changes yet must be executed, as the CDK CLI does (aws/aws-cdk#2029).
func (d *Deployer) waitChangeSet(
	ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack, id string,
) (bool, error) {
	poll := d.poller()
	for {
		out, err := cfn.DescribeChangeSet(ctx, &cloudformation.DescribeChangeSetInput{
			StackName: &s.StackName, ChangeSetName: &id,
		})
		if err != nil {
			return false, fmt.Errorf("describe change set: %s", awsconfig.Explain(err))
		}
		switch out.Status {
		case cfntypes.ChangeSetStatusCreateComplete:
			return false, nil
		case cfntypes.ChangeSetStatusFailed:
			reason := aws.ToString(out.StatusReason)
			if cfnstatus.NoChanges(reason) {
				return true, nil
			}
			return false, fmt.Errorf("change set failed: %s", reason)
		}
		if err := poll.Wait(ctx, false); err != nil {
			return false, err
		}
	}
}

// follow reports new stack events until the stack reaches a terminal status; it returns the
// stack as last described (nil when it is gone) and the failed events' reasons. Each poll reads
// the events only; the stack is described when its own event says it finished (and every fifth
// poll, in case that event was missed), so a deployment costs about one call per poll.
func (d *Deployer) follow(
	ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack, since time.Time,
) (*cfntypes.Stack, []string, error) {
	seen := map[string]bool{}
	var causes []string
	poll := d.poller()
	for n := 1; ; n++ {
		ev, err := cfn.DescribeStackEvents(ctx, &cloudformation.DescribeStackEventsInput{StackName: &s.StackName})
		if err != nil {
			return nil, causes, fmt.Errorf("read stack events: %s", awsconfig.Explain(err))
		}
		events := ev.StackEvents
		sort.SliceStable(events, func(i, j int) bool {
			return aws.ToTime(events[i].Timestamp).Before(aws.ToTime(events[j].Timestamp))
		})
		fresh, finished := false, false
		for _, e := range events {
			id := aws.ToString(e.EventId)
			if seen[id] || aws.ToTime(e.Timestamp).Before(since) {
				continue
			}
			seen[id], fresh = true, true
			status, reason := string(e.ResourceStatus), aws.ToString(e.ResourceStatusReason)
			if d.Events != nil {
				d.Events(Event{
					Stack: s.ID, LogicalID: aws.ToString(e.LogicalResourceId), ResourceType: aws.ToString(e.ResourceType),
					Status: status, Reason: reason,
				})
			}
			if strings.HasSuffix(status, "_FAILED") && reason != "" && !strings.Contains(reason, "Resource creation cancelled") {
				causes = append(causes, aws.ToString(e.LogicalResourceId)+": "+reason)
			}
			if aws.ToString(e.ResourceType) == "AWS::CloudFormation::Stack" &&
				aws.ToString(e.LogicalResourceId) == s.StackName &&
				!strings.HasSuffix(status, "_IN_PROGRESS") {
				finished = true
			}
		}
		if finished || n%5 == 0 {
			st, err := describe(ctx, cfn, s.StackName)
			if err != nil || st == nil {
				return nil, causes, err
			}
			if !strings.HasSuffix(string(st.StackStatus), "_IN_PROGRESS") {
				return st, causes, nil
			}
		}
		if err := poll.Wait(ctx, fresh); err != nil {
			// Where the stack stands, for the report, even though the wait was cut short.
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			st, _ := describe(last, cfn, s.StackName)
			return st, causes, err
		}
	}
}

// describeIdle describes the stack, first waiting (up to BusyTimeout) while another operation
// is updating it, rather than colliding with it.
func (d *Deployer) describeIdle(
	ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack,
) (*cfntypes.Stack, error) {
	limit := d.BusyTimeout
	if limit == 0 {
		limit = 30 * time.Minute
	}
	deadline := time.Now().Add(limit)
	poll := d.poller()
	announced := false
	for {
		st, err := describe(ctx, cfn, s.StackName)
		if err != nil || st == nil {
			return st, err
		}
		status := string(st.StackStatus)
		if !strings.HasSuffix(status, "_IN_PROGRESS") || st.StackStatus == cfntypes.StackStatusReviewInProgress {
			return st, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("stack %s is still %s after %s: another deployment is running; "+
				"let it finish (or cancel it) and run again", s.StackName, status, limit)
		}
		if !announced && d.Events != nil {
			d.Events(Event{Stack: s.ID, LogicalID: s.StackName, ResourceType: "AWS::CloudFormation::Stack", Status: status,
				Reason: "another operation is in progress; waiting for it to finish"})
		}
		announced = true
		if err := poll.Wait(ctx, false); err != nil {
			return nil, err
		}
	}
}

func (d *Deployer) deleteFailed(ctx context.Context, cfn *cloudformation.Client, name string) error {
	if _, err := cfn.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: &name}); err != nil {
		return fmt.Errorf("delete the failed stack %s: %s", name, awsconfig.Explain(err))
	}
	poll := d.poller()
	for {
		st, err := describe(ctx, cfn, name)
		if err != nil || st == nil {
			return err
		}
		if err := poll.Wait(ctx, false); err != nil {
			return err
		}
	}
}

// poller waits between status checks from Poll (a fast first look) up to MaxPoll, at 2×Poll
// while events keep coming (the CDK CLI's 2 s event polling), so a long deployment costs few
// calls and a short one finishes promptly.
func (d *Deployer) poller() *cfnstatus.Poller {
	lo, hi := d.Poll, d.MaxPoll
	if lo == 0 {
		lo = time.Second
	}
	if hi == 0 {
		hi = max(5*time.Second, lo)
	}
	return cfnstatus.NewPoller(lo, hi)
}

// counting counts the operations a client makes (once per call, not per retry).
func counting(n *atomic.Int64) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("cdkbotCountCalls",
			func(
				ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler,
			) (middleware.InitializeOutput, middleware.Metadata, error) {
				n.Add(1)
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
}

func outputs(st *cfntypes.Stack) map[string]string {
	if st == nil || len(st.Outputs) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, o := range st.Outputs {
		out[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return out
}

func parameters(m map[string]string) []cfntypes.Parameter {
	var out []cfntypes.Parameter
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, cfntypes.Parameter{ParameterKey: aws.String(k), ParameterValue: aws.String(m[k])})
	}
	return out
}

func tags(m map[string]string) []cfntypes.Tag {
	var out []cfntypes.Tag
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, cfntypes.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return out
}
