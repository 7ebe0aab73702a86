package deployed

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/cfnstatus"
	"github.com/cdkbot/cdkbot/internal/stackstate"
)

// DriftAPI is what drift detection takes.
type DriftAPI interface {
	DetectStackDrift(
		context.Context, *cloudformation.DetectStackDriftInput, ...func(*cloudformation.Options),
	) (*cloudformation.DetectStackDriftOutput, error)
	DescribeStackDriftDetectionStatus(
		context.Context, *cloudformation.DescribeStackDriftDetectionStatusInput, ...func(*cloudformation.Options),
	) (*cloudformation.DescribeStackDriftDetectionStatusOutput, error)
	DescribeStackResourceDrifts(
		context.Context, *cloudformation.DescribeStackResourceDriftsInput, ...func(*cloudformation.Options),
	) (*cloudformation.DescribeStackResourceDriftsOutput, error)
}

var _ DriftAPI = (*cloudformation.Client)(nil)

// Drift runs CloudFormation's drift detection on stack s through its lookup role, waiting up to
// the reader's Wait, and returns the drifted resources.
func (r *Reader) Drift(ctx context.Context, s *assembly.Stack) ([]stackstate.Drifted, error) {
	cfg, err := r.session(ctx, lookupRole(s, r.env(s)))
	if err != nil {
		return nil, err
	}
	return drift(ctx, cloudformation.NewFromConfig(cfg), s.StackName, r.wait())
}

func drift(ctx context.Context, client DriftAPI, stack string, wait time.Duration) ([]stackstate.Drifted, error) {
	det, err := client.DetectStackDrift(ctx, &cloudformation.DetectStackDriftInput{StackName: aws.String(stack)})
	if err != nil {
		return nil, fmt.Errorf("detect drift: %s", awsconfig.Explain(err))
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	poll := cfnstatus.NewPoller(500*time.Millisecond, 10*time.Second)
	for {
		st, err := client.DescribeStackDriftDetectionStatus(ctx, &cloudformation.DescribeStackDriftDetectionStatusInput{
			StackDriftDetectionId: det.StackDriftDetectionId,
		})
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
		if err := poll.Wait(ctx, false); err != nil {
			return nil, fmt.Errorf("drift detection did not finish within %s: %w", wait, err)
		}
	}
	var out []stackstate.Drifted
	in := &cloudformation.DescribeStackResourceDriftsInput{
		StackName: aws.String(stack),
		StackResourceDriftStatusFilters: []cfntypes.StackResourceDriftStatus{
			cfntypes.StackResourceDriftStatusModified, cfntypes.StackResourceDriftStatusDeleted,
		},
	}
	for {
		page, err := client.DescribeStackResourceDrifts(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("resource drifts: %s", awsconfig.Explain(err))
		}
		for _, d := range page.StackResourceDrifts {
			res := stackstate.Drifted{
				LogicalID: aws.ToString(d.LogicalResourceId), Type: aws.ToString(d.ResourceType),
				Status: string(d.StackResourceDriftStatus),
			}
			for _, p := range d.PropertyDifferences {
				res.Differences = append(res.Differences, stackstate.PropertyDifference{
					Path: aws.ToString(p.PropertyPath), Expected: aws.ToString(p.ExpectedValue),
					Actual: aws.ToString(p.ActualValue), Kind: string(p.DifferenceType),
				})
			}
			out = append(out, res)
		}
		if in.NextToken = page.NextToken; in.NextToken == nil {
			return out, nil
		}
	}
}
