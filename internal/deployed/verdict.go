package deployed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/cfn"
)

// ChangeSetAPI is what asking CloudFormation's verdict takes: a change set created, read and
// deleted. Never executed: the interface has no way to.
type ChangeSetAPI interface {
	DescribeStacks(context.Context, *cloudformation.DescribeStacksInput, ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
	CreateChangeSet(context.Context, *cloudformation.CreateChangeSetInput, ...func(*cloudformation.Options)) (*cloudformation.CreateChangeSetOutput, error)
	DescribeChangeSet(context.Context, *cloudformation.DescribeChangeSetInput, ...func(*cloudformation.Options)) (*cloudformation.DescribeChangeSetOutput, error)
	DeleteChangeSet(context.Context, *cloudformation.DeleteChangeSetInput, ...func(*cloudformation.Options)) (*cloudformation.DeleteChangeSetOutput, error)
}

var _ ChangeSetAPI = (*cloudformation.Client)(nil)

// maxInlineTemplate is CloudFormation's limit for a template passed in the request.
const maxInlineTemplate = 51_200

// ErrTooLarge: CloudFormation reads templates over 51,200 bytes only from S3.
var ErrTooLarge = errors.New("the template is over 51,200 bytes, which CloudFormation reads only from S3")

// Verdicts asks CloudFormation what deploying body to stack s would do: a change set named
// name is created through the stack's deploy role, read, and deleted whatever happens (the
// review failing, or being cancelled, too). It returns the Replacement of each resource
// CloudFormation would modify (True, Conditional, False), by logical id.
func (r *Reader) Verdicts(ctx context.Context, s *assembly.Stack, body []byte, name string) (map[string]string, error) {
	if len(body) > maxInlineTemplate {
		return nil, ErrTooLarge
	}
	env := r.env(s)
	role := awsconfig.Role{ARN: assembly.ResolvePlaceholders(s.AssumeRoleARN, env), ExternalID: s.AssumeRoleExternalID, Region: env.Region}
	cfg, err := r.session(ctx, role)
	if err != nil {
		return nil, err
	}
	var client ChangeSetAPI = cloudformation.NewFromConfig(cfg)
	if r.ChangeSets != nil {
		client = r.ChangeSets(cfg)
	}
	return verdicts(ctx, client, s, env, body, name, r.wait())
}

// session acts as role, or as the current credentials when the role cannot be assumed (as the
// CDK CLI does): a team may give the review a role of its own with just the read and
// change-set permissions it needs, instead of the bootstrap roles.
func (r *Reader) session(ctx context.Context, role awsconfig.Role) (aws.Config, error) {
	cfg, err := r.Sessions.For(ctx, role)
	if err == nil || role.ARN == "" {
		return cfg, err
	}
	if own, ownErr := r.Sessions.For(ctx, awsconfig.Role{Region: role.Region}); ownErr == nil {
		return own, nil
	}
	return cfg, err
}

func (r *Reader) env(s *assembly.Stack) assembly.Environment {
	env := s.Environment
	if env.Account == assembly.UnknownAccount || env.Account == "" {
		env.Account = r.Account
	}
	if env.Region == assembly.UnknownRegion || env.Region == "" {
		env.Region = r.Region
	}
	return env
}

func (r *Reader) wait() time.Duration {
	if r.Wait > 0 {
		return r.Wait
	}
	return 3 * time.Minute
}

func verdicts(ctx context.Context, client ChangeSetAPI, s *assembly.Stack, env assembly.Environment, body []byte, name string, wait time.Duration) (map[string]string, error) {
	params, err := parameters(ctx, client, s, body)
	if err != nil {
		return nil, err
	}
	in := &cloudformation.CreateChangeSetInput{StackName: aws.String(s.StackName), ChangeSetName: aws.String(name),
		ChangeSetType: cfntypes.ChangeSetTypeUpdate, TemplateBody: aws.String(string(body)), Parameters: params,
		Description:  aws.String("cdkbot review: what CloudFormation would do; never executed, deleted after reading"),
		Capabilities: []cfntypes.Capability{cfntypes.CapabilityCapabilityIam, cfntypes.CapabilityCapabilityNamedIam, cfntypes.CapabilityCapabilityAutoExpand}}
	if s.CloudFormationExecutionRoleARN != "" {
		in.RoleARN = aws.String(assembly.ResolvePlaceholders(s.CloudFormationExecutionRoleARN, env))
	}
	created, err := client.CreateChangeSet(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("create change set: %s", awsconfig.Explain(err))
	}
	id := aws.ToString(created.Id)
	defer func() {
		// Also when the review fails or is cancelled: a change set left behind would be listed
		// beside the deploy's and could be executed by hand.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, _ = client.DeleteChangeSet(dctx, &cloudformation.DeleteChangeSetInput{ChangeSetName: aws.String(id), StackName: aws.String(s.StackName)})
	}()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	out := map[string]string{}
	var token *string
	for delay := 200 * time.Millisecond; ; {
		desc, err := client.DescribeChangeSet(ctx, &cloudformation.DescribeChangeSetInput{ChangeSetName: aws.String(id), StackName: aws.String(s.StackName), NextToken: token})
		if err != nil {
			return nil, fmt.Errorf("describe change set: %s", awsconfig.Explain(err))
		}
		switch desc.Status {
		case cfntypes.ChangeSetStatusFailed:
			reason := aws.ToString(desc.StatusReason)
			if strings.Contains(reason, "didn't contain changes") || strings.Contains(reason, "No updates") {
				return out, nil
			}
			return nil, fmt.Errorf("the change set failed: %s", reason)
		case cfntypes.ChangeSetStatusCreateComplete:
			for _, c := range desc.Changes {
				if rc := c.ResourceChange; rc != nil && rc.Action == cfntypes.ChangeActionModify && rc.Replacement != "" {
					out[aws.ToString(rc.LogicalResourceId)] = string(rc.Replacement)
				}
			}
			if token = desc.NextToken; token == nil {
				return out, nil
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the change set was not ready within %s: %w", wait, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 5*time.Second)
	}
}

// parameters are the head template's parameters: the stack's own from the manifest, and the
// deployed values for the others the stack already has (as the CDK CLI deploys).
func parameters(ctx context.Context, client ChangeSetAPI, s *assembly.Stack, body []byte) ([]cfntypes.Parameter, error) {
	t, err := cfn.Parse(body)
	if err != nil {
		return nil, err
	}
	declared, _ := t.Get("Parameters")
	names, _ := declared.(*cfn.Object)
	if names == nil || names.Len() == 0 {
		return nil, nil
	}
	previous := map[string]bool{}
	if desc, err := client.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(s.StackName)}); err == nil && len(desc.Stacks) > 0 {
		for _, p := range desc.Stacks[0].Parameters {
			previous[aws.ToString(p.ParameterKey)] = true
		}
	}
	var out []cfntypes.Parameter
	for _, k := range names.Keys() {
		if v, ok := s.Parameters[k]; ok {
			out = append(out, cfntypes.Parameter{ParameterKey: aws.String(k), ParameterValue: aws.String(v)})
		} else if previous[k] {
			out = append(out, cfntypes.Parameter{ParameterKey: aws.String(k), UsePreviousValue: aws.Bool(true)})
		}
	}
	return out, nil
}

// DriftAPI is what drift detection takes.
type DriftAPI interface {
	DetectStackDrift(context.Context, *cloudformation.DetectStackDriftInput, ...func(*cloudformation.Options)) (*cloudformation.DetectStackDriftOutput, error)
	DescribeStackDriftDetectionStatus(context.Context, *cloudformation.DescribeStackDriftDetectionStatusInput, ...func(*cloudformation.Options)) (*cloudformation.DescribeStackDriftDetectionStatusOutput, error)
	DescribeStackResourceDrifts(context.Context, *cloudformation.DescribeStackResourceDriftsInput, ...func(*cloudformation.Options)) (*cloudformation.DescribeStackResourceDriftsOutput, error)
}

var _ DriftAPI = (*cloudformation.Client)(nil)

// Drifted is a resource that is no longer what its stack set: changed or deleted outside CloudFormation.
type Drifted struct {
	LogicalID, Type string
	Status          string // MODIFIED or DELETED
	Differences     []PropertyDifference
}

// PropertyDifference is one property of a drifted resource.
type PropertyDifference struct {
	Path, Expected, Actual, Kind string // Kind: ADD, REMOVE, NOT_EQUAL
}

// Drift runs CloudFormation's drift detection on stack s through its lookup role, waiting up to
// the reader's Wait, and returns the drifted resources.
func (r *Reader) Drift(ctx context.Context, s *assembly.Stack) ([]Drifted, error) {
	env := r.env(s)
	role := awsconfig.Role{Region: env.Region}
	if s.LookupRole != nil && s.LookupRole.ARN != "" {
		role.ARN, role.ExternalID = assembly.ResolvePlaceholders(s.LookupRole.ARN, env), s.LookupRole.AssumeRoleExternalID
	}
	cfg, err := r.session(ctx, role)
	if err != nil {
		return nil, err
	}
	return drift(ctx, cloudformation.NewFromConfig(cfg), s.StackName, r.wait())
}

func drift(ctx context.Context, client DriftAPI, stack string, wait time.Duration) ([]Drifted, error) {
	det, err := client.DetectStackDrift(ctx, &cloudformation.DetectStackDriftInput{StackName: aws.String(stack)})
	if err != nil {
		return nil, fmt.Errorf("detect drift: %s", awsconfig.Explain(err))
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for delay := 500 * time.Millisecond; ; delay = min(delay*2, 10*time.Second) {
		st, err := client.DescribeStackDriftDetectionStatus(ctx, &cloudformation.DescribeStackDriftDetectionStatusInput{StackDriftDetectionId: det.StackDriftDetectionId})
		if err != nil {
			return nil, fmt.Errorf("drift detection status: %s", awsconfig.Explain(err))
		}
		if st.DetectionStatus == cfntypes.StackDriftDetectionStatusDetectionFailed {
			// Partly checked: what was found still counts; the reason says what was not.
			if st.StackDriftStatus != cfntypes.StackDriftStatusDrifted {
				return nil, fmt.Errorf("drift detection failed: %s", aws.ToString(st.DetectionStatusReason))
			}
			break
		}
		if st.DetectionStatus == cfntypes.StackDriftDetectionStatusDetectionComplete {
			if st.StackDriftStatus != cfntypes.StackDriftStatusDrifted {
				return nil, nil
			}
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("drift detection did not finish within %s", wait)
		case <-time.After(delay):
		}
	}
	var out []Drifted
	in := &cloudformation.DescribeStackResourceDriftsInput{StackName: aws.String(stack),
		StackResourceDriftStatusFilters: []cfntypes.StackResourceDriftStatus{cfntypes.StackResourceDriftStatusModified, cfntypes.StackResourceDriftStatusDeleted}}
	for {
		page, err := client.DescribeStackResourceDrifts(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("resource drifts: %s", awsconfig.Explain(err))
		}
		for _, d := range page.StackResourceDrifts {
			res := Drifted{LogicalID: aws.ToString(d.LogicalResourceId), Type: aws.ToString(d.ResourceType), Status: string(d.StackResourceDriftStatus)}
			for _, p := range d.PropertyDifferences {
				res.Differences = append(res.Differences, PropertyDifference{Path: aws.ToString(p.PropertyPath), Expected: aws.ToString(p.ExpectedValue),
					Actual: aws.ToString(p.ActualValue), Kind: string(p.DifferenceType)})
			}
			out = append(out, res)
		}
		if in.NextToken = page.NextToken; in.NextToken == nil {
			return out, nil
		}
	}
}
