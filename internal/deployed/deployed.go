// Package deployed reads what runs, for a review: each stack's template as CloudFormation holds
// it, through the stack's read-only lookup role (as `cdk diff` does), so the review can say where
// the deployed stack is not the base it compares against.
package deployed

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"golang.org/x/sync/errgroup"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfnstatus"
	"github.com/cdkbot/cdkbot/internal/stackstate"
)

// CloudFormationAPI is what the reader asks CloudFormation: nothing that changes anything.
type CloudFormationAPI interface {
	DescribeStacks(
		context.Context, *cloudformation.DescribeStacksInput, ...func(*cloudformation.Options),
	) (*cloudformation.DescribeStacksOutput, error)
	GetTemplate(
		context.Context, *cloudformation.GetTemplateInput, ...func(*cloudformation.Options),
	) (*cloudformation.GetTemplateOutput, error)
	DescribeStackResources(
		context.Context, *cloudformation.DescribeStackResourcesInput, ...func(*cloudformation.Options),
	) (*cloudformation.DescribeStackResourcesOutput, error)
}

var _ CloudFormationAPI = (*cloudformation.Client)(nil)

// Reader reads deployed templates.
type Reader struct {
	Sessions *awsconfig.Sessions
	// Account stands in for environment-agnostic stacks' account (the credentials' own).
	Account string
	// Region stands in for environment-agnostic stacks' region ("" skips them).
	Region string
	// Wait bounds waiting for a change set or a drift detection (zero: 3 minutes).
	Wait time.Duration
}

// Read returns what each stack runs, by qualified id. A stack that cannot be read is in the
// map with Err set: the review says so rather than guessing.
func (r *Reader) Read(ctx context.Context, stacks []*assembly.Stack) map[string]*stackstate.Stack {
	out := map[string]*stackstate.Stack{}
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, s := range stacks {
		g.Go(func() error {
			d := r.read(ctx, s)
			mu.Lock()
			out[s.QualifiedID()] = d
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	return out
}

func (r *Reader) read(ctx context.Context, s *assembly.Stack) *stackstate.Stack {
	env := r.env(s)
	if env.Region == "" || env.Account == "" {
		return &stackstate.Stack{Err: "environment-agnostic stack and no AWS region or account to stand in for it"}
	}
	role := lookupRole(s, env)
	cfg, err := r.session(ctx, role)
	if err != nil {
		return &stackstate.Stack{Err: fmt.Sprintf("the lookup role cannot be assumed (%v): "+
			"bootstrap the environment with a current `cdk bootstrap`, "+
			"or let the credentials assume %s", err, role.ARN)}
	}
	return readStack(ctx, cloudformation.NewFromConfig(cfg), s.StackName)
}

// readStack asks for one stack's template; a stack that does not exist (or exists only as a
// change set never executed) is not deployed.
func readStack(ctx context.Context, client CloudFormationAPI, name string) *stackstate.Stack {
	desc, err := client.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if cfnstatus.StackMissing(err) {
		return &stackstate.Stack{}
	}
	if err != nil {
		return &stackstate.Stack{Err: "describe stack " + name + ": " + awsconfig.Explain(err)}
	}
	if len(desc.Stacks) == 0 || desc.Stacks[0].StackStatus == cfntypes.StackStatusReviewInProgress {
		return &stackstate.Stack{}
	}
	tpl, err := client.GetTemplate(ctx, &cloudformation.GetTemplateInput{
		StackName: aws.String(name), TemplateStage: cfntypes.TemplateStageOriginal,
	})
	if err != nil {
		return &stackstate.Stack{Err: "get template of " + name + ": " + awsconfig.Explain(err)}
	}
	t, err := cfn.Parse([]byte(aws.ToString(tpl.TemplateBody)))
	if err != nil {
		return &stackstate.Stack{Err: "the deployed template of " + name + " does not parse: " + err.Error()}
	}
	st := &stackstate.Stack{Deployed: true, Template: t, Nested: map[string]*cfn.Object{}}
	if err := readNested(ctx, client, name, "", st.Nested, 0); err != nil {
		return &stackstate.Stack{Err: err.Error()}
	}
	return st
}

// maxNesting bounds nested stacks read, as cfndiff bounds those it diffs.
const maxNesting = 8

// readNested reads the templates the nested stacks of stack (a name or ARN) run.
func readNested(
	ctx context.Context, client CloudFormationAPI, stack, prefix string, out map[string]*cfn.Object, depth int,
) error {
	if depth >= maxNesting {
		return nil
	}
	res, err := client.DescribeStackResources(ctx, &cloudformation.DescribeStackResourcesInput{
		StackName: aws.String(stack),
	})
	if err != nil {
		return fmt.Errorf("list the resources of %s: %s", stack, awsconfig.Explain(err))
	}
	for _, r := range res.StackResources {
		if aws.ToString(r.ResourceType) != "AWS::CloudFormation::Stack" || aws.ToString(r.PhysicalResourceId) == "" {
			continue
		}
		id := prefix + aws.ToString(r.LogicalResourceId)
		tpl, err := client.GetTemplate(ctx, &cloudformation.GetTemplateInput{
			StackName: r.PhysicalResourceId, TemplateStage: cfntypes.TemplateStageOriginal,
		})
		if err != nil {
			return fmt.Errorf("get template of nested stack %s: %s", id, awsconfig.Explain(err))
		}
		t, err := cfn.Parse([]byte(aws.ToString(tpl.TemplateBody)))
		if err != nil {
			return fmt.Errorf("the deployed template of nested stack %s does not parse: %v", id, err)
		}
		out[id] = t
		if err := readNested(ctx, client, aws.ToString(r.PhysicalResourceId), id+"/", out, depth+1); err != nil {
			return err
		}
	}
	return nil
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

// lookupRole is the stack's read-only lookup role, or the current credentials for stacks
// synthesized without one (legacy synthesis).
func lookupRole(s *assembly.Stack, env assembly.Environment) awsconfig.Role {
	role := awsconfig.Role{Region: env.Region}
	if s.LookupRole != nil && s.LookupRole.ARN != "" {
		role.ARN, role.ExternalID = assembly.ResolvePlaceholders(s.LookupRole.ARN, env), s.LookupRole.AssumeRoleExternalID
	}
	return role
}
