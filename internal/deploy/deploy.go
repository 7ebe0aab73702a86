// Package deploy executes a deploy plan against CloudFormation: per stack it acts as the
// stack's deploy role, checks the environment's bootstrap version, skips a stack whose
// deployed template and parameters are unchanged, and otherwise creates, executes and follows
// a change set to a terminal status, reporting the events that explain a failure.
package deploy

import (
	"bytes"
	"cmp"
	"context"
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

// Event is one stack event, reported once as it is seen.
type Event struct {
	Stack, LogicalID, ResourceType, Status, Reason string
}

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
	return fmt.Sprintf("%s is %s; this assembly needs version %d or later: run `cdk bootstrap %s`", e.Env, have, e.Need, e.Env)
}

// limit is the time one stack may take, for publishing its assets and again for deploying it.
func (d *Deployer) limit() time.Duration {
	if d.Timeout == 0 {
		return time.Hour
	}
	return d.Timeout
}

// Deploy deploys one stack of the plan.
func (d *Deployer) Deploy(ctx context.Context, s deployplan.Stack) (Outcome, error) {
	start := time.Now()
	out := Outcome{Stack: s.ID, Result: Failed}
	var calls atomic.Int64
	limit := d.limit()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	done := func(err error) (Outcome, error) {
		out.Duration = time.Since(start).Round(time.Millisecond)
		out.Seconds = out.Duration.Seconds()
		out.APICalls = calls.Load()
		if err != nil {
			if ctx.Err() != nil && parent.Err() == nil {
				err = fmt.Errorf("gave up after %s (the stack is %s; it may still finish in CloudFormation): %w", limit, out.Status, err)
			}
			err = fmt.Errorf("stack %s (%s): %w", s.ID, s.Env, err)
			out.Error = err.Error()
		}
		return out, err
	}
	cfg, err := d.Sessions.For(ctx, awsconfig.Role{ARN: s.AssumeRoleARN, ExternalID: s.AssumeRoleExternalID, Region: s.Environment.Region})
	if err != nil {
		return done(err)
	}
	if s.Bootstrap != nil {
		if err := checkBootstrap(ctx, ssm.NewFromConfig(cfg, func(o *ssm.Options) { o.APIOptions = append(o.APIOptions, counting(&calls)) }), s); err != nil {
			return done(err)
		}
	}
	cfn := cloudformation.NewFromConfig(cfg, func(o *cloudformation.Options) { o.APIOptions = append(o.APIOptions, counting(&calls)) })
	deployed, err := d.describeIdle(ctx, cfn, s)
	if err != nil {
		return done(err)
	}
	exists := deployed != nil // possibly only as an unexecuted change set, which may be a leftover
	if deployed != nil {
		switch deployed.StackStatus {
		case cfntypes.StackStatusRollbackComplete, cfntypes.StackStatusRollbackFailed:
			// A stack whose creation failed cannot be updated: delete it and create it again.
			if err := d.deleteFailed(ctx, cfn, s.StackName); err != nil {
				return done(err)
			}
			deployed, exists = nil, false // gone, with its change sets
		case cfntypes.StackStatusReviewInProgress:
			deployed = nil // created by a change set never executed: still a creation
		}
	}
	body, url, err := d.template(s)
	if err != nil {
		return done(err)
	}
	var current []byte
	if deployed != nil {
		same, tpl, err := unchanged(ctx, cfn, s, deployed, body)
		if err != nil {
			return done(err)
		}
		current = tpl
		if same {
			out.Result, out.Status, out.Outputs = NoChanges, string(deployed.StackStatus), outputs(deployed)
			return done(nil)
		}
	}
	if d.Approve != nil {
		if err := d.Approve(s, current, body); err != nil {
			out.Result = Refused
			return done(err)
		}
	}
	if s.Template.UploadBucket != "" {
		// A legacy template too large to inline goes to the staging bucket first, as the CDK CLI does.
		if _, err := awsconfig.S3(cfg).PutObject(ctx, &s3.PutObjectInput{Bucket: &s.Template.UploadBucket, Key: &s.Template.UploadKey,
			Body: bytes.NewReader(body)}); err != nil {
			return done(fmt.Errorf("upload the template to s3://%s/%s: %s", s.Template.UploadBucket, s.Template.UploadKey, awsconfig.Explain(err)))
		}
	}
	csType := cfntypes.ChangeSetTypeCreate
	if deployed != nil {
		csType = cfntypes.ChangeSetTypeUpdate // moto needs it explicit for an existing stack
	}
	in := &cloudformation.CreateChangeSetInput{
		StackName: &s.StackName, ChangeSetName: &s.ChangeSetName, ChangeSetType: csType,
		Capabilities: []cfntypes.Capability{cfntypes.CapabilityCapabilityIam, cfntypes.CapabilityCapabilityNamedIam, cfntypes.CapabilityCapabilityAutoExpand},
		Parameters:   parameters(s.Parameters), Tags: tags(s.Tags), NotificationARNs: s.NotificationARNs,
	}
	if s.ExecutionRoleARN != "" {
		in.RoleARN = &s.ExecutionRoleARN
	}
	if url != "" {
		in.TemplateURL = &url
	} else {
		in.TemplateBody = aws.String(string(body))
	}
	if exists {
		// A change set left by an earlier attempt of the same revision is replaced.
		if err := deleteLeftover(ctx, cfn, s); err != nil {
			return done(err)
		}
	}
	created, err := cfn.CreateChangeSet(ctx, in)
	if err != nil {
		return done(fmt.Errorf("create change set: %s", awsconfig.Explain(err)))
	}
	// From here the change set is named by its ARN: unambiguous, where a name is only unique
	// per stack (moto even resolves a bare name across stacks).
	csID := aws.ToString(created.Id)
	if csID == "" {
		csID = s.ChangeSetName
	}
	empty, err := d.waitChangeSet(ctx, cfn, s, csID)
	if err != nil {
		return done(err)
	}
	if empty && csType == cfntypes.ChangeSetTypeUpdate { // a creation is never empty: execute it
		_, _ = cfn.DeleteChangeSet(ctx, &cloudformation.DeleteChangeSetInput{StackName: &s.StackName, ChangeSetName: &csID})
		out.Result = NoChanges
		if deployed != nil {
			out.Status, out.Outputs = string(deployed.StackStatus), outputs(deployed)
		}
		return done(nil)
	}
	since := time.Now().Add(-time.Second)
	if _, err := cfn.ExecuteChangeSet(ctx, &cloudformation.ExecuteChangeSetInput{StackName: &s.StackName, ChangeSetName: &csID}); err != nil {
		return done(fmt.Errorf("execute change set: %s", awsconfig.Explain(err)))
	}
	final, causes, err := d.follow(ctx, cfn, s, since)
	status := "DELETE_COMPLETE"
	if final != nil {
		status = string(final.StackStatus)
	}
	out.Status, out.Causes, out.Outputs = status, causes, outputs(final)
	if err != nil {
		return done(err)
	}
	if final == nil {
		return done(fmt.Errorf("the stack was deleted during the deployment (its creation failed and rolled back): %s", strings.Join(causes, "; ")))
	}
	if !strings.HasSuffix(status, "_COMPLETE") || strings.Contains(status, "ROLLBACK") {
		return done(fmt.Errorf("ended %s: %s", status, strings.Join(causes, "; ")))
	}
	// Only when it differs from what the stack has (a new stack has none).
	if (deployed == nil && s.TerminationProtection) || (deployed != nil && aws.ToBool(deployed.EnableTerminationProtection) != s.TerminationProtection) {
		if _, err := cfn.UpdateTerminationProtection(ctx, &cloudformation.UpdateTerminationProtectionInput{
			StackName: &s.StackName, EnableTerminationProtection: &s.TerminationProtection}); err != nil {
			return done(fmt.Errorf("update termination protection: %s", awsconfig.Explain(err)))
		}
	}
	out.Result = Deployed
	return done(nil)
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
				if _, err := cfn.DeleteChangeSet(ctx, &cloudformation.DeleteChangeSetInput{StackName: &s.StackName, ChangeSetName: &id}); err != nil {
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
		return fmt.Errorf("bootstrap version %s is %q, not a number", s.Bootstrap.Parameter, aws.ToString(out.Parameter.Value))
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
func unchanged(ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack, deployed *cfntypes.Stack, body []byte) (bool, []byte, error) {
	got, err := cfn.GetTemplate(ctx, &cloudformation.GetTemplateInput{StackName: &s.StackName, TemplateStage: cfntypes.TemplateStageOriginal})
	if err != nil {
		return false, nil, fmt.Errorf("read the deployed template: %s", awsconfig.Explain(err))
	}
	current := []byte(aws.ToString(got.TemplateBody))
	if !strings.HasSuffix(string(deployed.StackStatus), "_COMPLETE") || strings.Contains(string(deployed.StackStatus), "ROLLBACK") {
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
	if !slices.Equal(slices.Sorted(slices.Values(deployed.NotificationARNs)), slices.Sorted(slices.Values(s.NotificationARNs))) {
		return false, current, nil
	}
	return aws.ToBool(deployed.EnableTerminationProtection) == s.TerminationProtection, current, nil
}

// waitChangeSet waits for the change set to be created; it reports an empty one.
func (d *Deployer) waitChangeSet(ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack, id string) (bool, error) {
	poll := d.poller()
	for {
		out, err := cfn.DescribeChangeSet(ctx, &cloudformation.DescribeChangeSetInput{StackName: &s.StackName, ChangeSetName: &id})
		if err != nil {
			return false, fmt.Errorf("describe change set: %s", awsconfig.Explain(err))
		}
		switch out.Status {
		case cfntypes.ChangeSetStatusCreateComplete:
			return len(out.Changes) == 0, nil
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
func (d *Deployer) follow(ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack, since time.Time) (*cfntypes.Stack, []string, error) {
	seen := map[string]bool{}
	var causes []string
	poll := d.poller()
	for n := 1; ; n++ {
		ev, err := cfn.DescribeStackEvents(ctx, &cloudformation.DescribeStackEventsInput{StackName: &s.StackName})
		if err != nil {
			return nil, causes, fmt.Errorf("read stack events: %s", awsconfig.Explain(err))
		}
		events := ev.StackEvents
		sort.SliceStable(events, func(i, j int) bool { return aws.ToTime(events[i].Timestamp).Before(aws.ToTime(events[j].Timestamp)) })
		fresh, finished := false, false
		for _, e := range events {
			id := aws.ToString(e.EventId)
			if seen[id] || aws.ToTime(e.Timestamp).Before(since) {
				continue
			}
			seen[id], fresh = true, true
			status, reason := string(e.ResourceStatus), aws.ToString(e.ResourceStatusReason)
			if d.Events != nil {
				d.Events(Event{Stack: s.ID, LogicalID: aws.ToString(e.LogicalResourceId), ResourceType: aws.ToString(e.ResourceType), Status: status, Reason: reason})
			}
			if strings.HasSuffix(status, "_FAILED") && reason != "" && !strings.Contains(reason, "Resource creation cancelled") {
				causes = append(causes, aws.ToString(e.LogicalResourceId)+": "+reason)
			}
			if aws.ToString(e.ResourceType) == "AWS::CloudFormation::Stack" && aws.ToString(e.LogicalResourceId) == s.StackName &&
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
func (d *Deployer) describeIdle(ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack) (*cfntypes.Stack, error) {
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
			return nil, fmt.Errorf("stack %s is still %s after %s: another deployment is running; let it finish (or cancel it) and run again",
				s.StackName, status, limit)
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
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
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
