package deployed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfnstatus"
)

// ChangeSetAPI is what asking CloudFormation's verdict takes: a change set created, read and
// deleted. Never executed: the interface has no way to.
type ChangeSetAPI interface {
	DescribeStacks(
		context.Context, *cloudformation.DescribeStacksInput, ...func(*cloudformation.Options),
	) (*cloudformation.DescribeStacksOutput, error)
	CreateChangeSet(
		context.Context, *cloudformation.CreateChangeSetInput, ...func(*cloudformation.Options),
	) (*cloudformation.CreateChangeSetOutput, error)
	DescribeChangeSet(
		context.Context, *cloudformation.DescribeChangeSetInput, ...func(*cloudformation.Options),
	) (*cloudformation.DescribeChangeSetOutput, error)
	DeleteChangeSet(
		context.Context, *cloudformation.DeleteChangeSetInput, ...func(*cloudformation.Options),
	) (*cloudformation.DeleteChangeSetOutput, error)
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
	role := awsconfig.Role{
		ARN: assembly.ResolvePlaceholders(s.AssumeRoleARN, env), ExternalID: s.AssumeRoleExternalID, Region: env.Region,
	}
	cfg, err := r.session(ctx, role)
	if err != nil {
		return nil, err
	}
	return verdicts(ctx, cloudformation.NewFromConfig(cfg), s, env, body, name, r.wait())
}

func verdicts(
	ctx context.Context, client ChangeSetAPI, s *assembly.Stack, env assembly.Environment,
	body []byte, name string, wait time.Duration,
) (map[string]string, error) {
	params, err := parameters(ctx, client, s, body)
	if err != nil {
		return nil, err
	}
	in := &cloudformation.CreateChangeSetInput{StackName: aws.String(s.StackName), ChangeSetName: aws.String(name),
		ChangeSetType: cfntypes.ChangeSetTypeUpdate, TemplateBody: aws.String(string(body)), Parameters: params,
		Description: aws.String("cdkbot review: what CloudFormation would do; never executed, deleted after reading"),
		Capabilities: []cfntypes.Capability{
			cfntypes.CapabilityCapabilityIam, cfntypes.CapabilityCapabilityNamedIam, cfntypes.CapabilityCapabilityAutoExpand,
		}}
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
		_, _ = client.DeleteChangeSet(dctx, &cloudformation.DeleteChangeSetInput{
			ChangeSetName: aws.String(id), StackName: aws.String(s.StackName),
		})
	}()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	out := map[string]string{}
	var token *string
	poll := cfnstatus.NewPoller(200*time.Millisecond, 5*time.Second)
	for {
		desc, err := client.DescribeChangeSet(ctx, &cloudformation.DescribeChangeSetInput{
			ChangeSetName: aws.String(id), StackName: aws.String(s.StackName), NextToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("describe change set: %s", awsconfig.Explain(err))
		}
		switch desc.Status {
		case cfntypes.ChangeSetStatusFailed:
			reason := aws.ToString(desc.StatusReason)
			if cfnstatus.NoChanges(reason) {
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
		if err := poll.Wait(ctx, false); err != nil {
			return nil, fmt.Errorf("the change set was not ready within %s: %w", wait, err)
		}
	}
}

// parameters are the head template's parameters: the stack's own from the manifest, and the
// deployed values for the others the stack already has (as the CDK CLI deploys).
func parameters(
	ctx context.Context, client ChangeSetAPI, s *assembly.Stack, body []byte,
) ([]cfntypes.Parameter, error) {
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
	if desc, err := client.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{
		StackName: aws.String(s.StackName),
	}); err == nil && len(desc.Stacks) > 0 {
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
