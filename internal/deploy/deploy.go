// Package deploy executes a deploy plan against CloudFormation: per stack it acts as the
// stack's deploy role, checks the environment's bootstrap version, skips a stack whose
// deployed template and parameters are unchanged, and otherwise creates, executes and follows
// a change set to a terminal status, reporting the events that explain a failure.
package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/deployplan"
)

// Result of deploying one stack.
type Result string

// Results.
const (
	Deployed  Result = "deployed"
	NoChanges Result = "no changes"
	Failed    Result = "failed"
)

// Outcome of one stack.
type Outcome struct {
	Stack    string        `json:"stack"`
	Result   Result        `json:"result"`
	Status   string        `json:"status,omitempty"` // final CloudFormation status
	Duration time.Duration `json:"-"`
	Seconds  float64       `json:"seconds"`
	// Causes are the failed resource events, oldest first, when the deployment failed.
	Causes []string `json:"causes,omitempty"`
}

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
	// Poll is the interval between status checks; zero means 2 s.
	Poll time.Duration
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

// Deploy deploys one stack of the plan.
func (d *Deployer) Deploy(ctx context.Context, s deployplan.Stack) (Outcome, error) {
	start := time.Now()
	out := Outcome{Stack: s.ID, Result: Failed}
	done := func(err error) (Outcome, error) {
		out.Duration = time.Since(start).Round(time.Millisecond)
		out.Seconds = out.Duration.Seconds()
		if err != nil {
			err = fmt.Errorf("stack %s (%s): %w", s.ID, s.Env, err)
		}
		return out, err
	}
	cfg, err := d.Sessions.For(ctx, awsconfig.Role{ARN: s.AssumeRoleARN, ExternalID: s.AssumeRoleExternalID, Region: s.Environment.Region})
	if err != nil {
		return done(err)
	}
	if s.Bootstrap != nil {
		if err := checkBootstrap(ctx, ssm.NewFromConfig(cfg), s); err != nil {
			return done(err)
		}
	}
	cfn := cloudformation.NewFromConfig(cfg)
	deployed, err := describe(ctx, cfn, s.StackName)
	if err != nil {
		return done(err)
	}
	if deployed != nil && deployed.StackStatus == cfntypes.StackStatusRollbackComplete {
		// A stack whose creation failed cannot be updated: delete it and create it again.
		if err := d.deleteFailed(ctx, cfn, s.StackName); err != nil {
			return done(err)
		}
		deployed = nil
	}
	body, url, err := d.template(s)
	if err != nil {
		return done(err)
	}
	if deployed != nil {
		same, err := unchanged(ctx, cfn, s, deployed, body)
		if err != nil {
			return done(err)
		}
		if same {
			out.Result, out.Status = NoChanges, string(deployed.StackStatus)
			return done(nil)
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
	if deployed != nil {
		// A change set left by an earlier attempt of the same revision is replaced.
		if err := deleteLeftover(ctx, cfn, s); err != nil {
			return done(err)
		}
	}
	if _, err := cfn.CreateChangeSet(ctx, in); err != nil {
		return done(fmt.Errorf("create change set: %s", awsconfig.Explain(err)))
	}
	empty, err := d.waitChangeSet(ctx, cfn, s)
	if err != nil {
		return done(err)
	}
	if empty {
		_, _ = cfn.DeleteChangeSet(ctx, &cloudformation.DeleteChangeSetInput{StackName: &s.StackName, ChangeSetName: &s.ChangeSetName})
		out.Result = NoChanges
		return done(nil)
	}
	since := time.Now().Add(-time.Second)
	if _, err := cfn.ExecuteChangeSet(ctx, &cloudformation.ExecuteChangeSetInput{StackName: &s.StackName, ChangeSetName: &s.ChangeSetName}); err != nil {
		return done(fmt.Errorf("execute change set: %s", awsconfig.Explain(err)))
	}
	status, causes, err := d.follow(ctx, cfn, s, since)
	out.Status, out.Causes = status, causes
	if err != nil {
		return done(err)
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
				if _, err := cfn.DeleteChangeSet(ctx, &cloudformation.DeleteChangeSetInput{StackName: &s.StackName, ChangeSetName: &s.ChangeSetName}); err != nil {
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
		if strings.Contains(err.Error(), "does not exist") {
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
	if d.ReadTemplate == nil {
		return nil, "", errors.New("no template reader configured")
	}
	b, err := d.ReadTemplate(s.Template.Path)
	if err != nil {
		return nil, "", err
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
func unchanged(ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack, deployed *cfntypes.Stack, body []byte) (bool, error) {
	if !strings.HasSuffix(string(deployed.StackStatus), "_COMPLETE") || strings.Contains(string(deployed.StackStatus), "ROLLBACK") {
		return false, nil
	}
	got, err := cfn.GetTemplate(ctx, &cloudformation.GetTemplateInput{StackName: &s.StackName, TemplateStage: cfntypes.TemplateStageOriginal})
	if err != nil {
		return false, fmt.Errorf("read the deployed template: %s", awsconfig.Explain(err))
	}
	if strings.TrimSpace(aws.ToString(got.TemplateBody)) != strings.TrimSpace(string(body)) {
		return false, nil
	}
	have := map[string]string{}
	for _, p := range deployed.Parameters {
		have[aws.ToString(p.ParameterKey)] = aws.ToString(p.ParameterValue)
	}
	for k, v := range s.Parameters {
		if have[k] != v {
			return false, nil
		}
	}
	tagsHave := map[string]string{}
	for _, t := range deployed.Tags {
		tagsHave[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	if len(tagsHave) != len(s.Tags) {
		return false, nil
	}
	for k, v := range s.Tags {
		if tagsHave[k] != v {
			return false, nil
		}
	}
	return aws.ToBool(deployed.EnableTerminationProtection) == s.TerminationProtection, nil
}

// waitChangeSet waits for the change set to be created; it reports an empty one.
func (d *Deployer) waitChangeSet(ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack) (bool, error) {
	for {
		out, err := cfn.DescribeChangeSet(ctx, &cloudformation.DescribeChangeSetInput{StackName: &s.StackName, ChangeSetName: &s.ChangeSetName})
		if err != nil {
			return false, fmt.Errorf("describe change set: %s", awsconfig.Explain(err))
		}
		switch out.Status {
		case cfntypes.ChangeSetStatusCreateComplete:
			return len(out.Changes) == 0, nil
		case cfntypes.ChangeSetStatusFailed:
			reason := aws.ToString(out.StatusReason)
			if strings.Contains(reason, "didn't contain changes") || strings.Contains(reason, "No updates are to be performed") {
				return true, nil
			}
			return false, fmt.Errorf("change set failed: %s", reason)
		}
		if err := d.sleep(ctx); err != nil {
			return false, err
		}
	}
}

// follow reports new stack events until the stack reaches a terminal status; it returns the
// status and the failed events' reasons.
func (d *Deployer) follow(ctx context.Context, cfn *cloudformation.Client, s deployplan.Stack, since time.Time) (string, []string, error) {
	seen := map[string]bool{}
	var causes []string
	for {
		ev, err := cfn.DescribeStackEvents(ctx, &cloudformation.DescribeStackEventsInput{StackName: &s.StackName})
		if err != nil {
			return "", causes, fmt.Errorf("read stack events: %s", awsconfig.Explain(err))
		}
		events := ev.StackEvents
		sort.SliceStable(events, func(i, j int) bool { return aws.ToTime(events[i].Timestamp).Before(aws.ToTime(events[j].Timestamp)) })
		for _, e := range events {
			id := aws.ToString(e.EventId)
			if seen[id] || aws.ToTime(e.Timestamp).Before(since) {
				continue
			}
			seen[id] = true
			status, reason := string(e.ResourceStatus), aws.ToString(e.ResourceStatusReason)
			if d.Events != nil {
				d.Events(Event{Stack: s.ID, LogicalID: aws.ToString(e.LogicalResourceId), ResourceType: aws.ToString(e.ResourceType), Status: status, Reason: reason})
			}
			if strings.HasSuffix(status, "_FAILED") && reason != "" && !strings.Contains(reason, "Resource creation cancelled") {
				causes = append(causes, aws.ToString(e.LogicalResourceId)+": "+reason)
			}
		}
		st, err := describe(ctx, cfn, s.StackName)
		if err != nil {
			return "", causes, err
		}
		if st == nil {
			return "DELETE_COMPLETE", causes, nil
		}
		status := string(st.StackStatus)
		if !strings.HasSuffix(status, "_IN_PROGRESS") {
			return status, causes, nil
		}
		if err := d.sleep(ctx); err != nil {
			return status, causes, err
		}
	}
}

func (d *Deployer) deleteFailed(ctx context.Context, cfn *cloudformation.Client, name string) error {
	if _, err := cfn.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: &name}); err != nil {
		return fmt.Errorf("delete the failed stack %s: %s", name, awsconfig.Explain(err))
	}
	for {
		st, err := describe(ctx, cfn, name)
		if err != nil || st == nil {
			return err
		}
		if err := d.sleep(ctx); err != nil {
			return err
		}
	}
}

func (d *Deployer) sleep(ctx context.Context) error {
	p := d.Poll
	if p == 0 {
		p = 2 * time.Second
	}
	select {
	case <-time.After(p):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
