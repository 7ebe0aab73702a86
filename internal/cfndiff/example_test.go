package cfndiff_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

// Diff says, per resource, what CloudFormation will do to go from the deployed template to the
// proposed one (cfn.Parse reads either JSON or YAML). Renaming the bucket replaces it, and the
// replacement spreads to the policy that names it; the queue is destroyed, the topic is updated
// in place, the table is created.
func ExampleDiff() {
	deployed, err := cfn.Parse([]byte(`
Resources:
  Logs:
    Type: AWS::S3::Bucket
    Properties: {BucketName: shop-logs}
  LogsPolicy:
    Type: AWS::S3::BucketPolicy
    Properties: {Bucket: !Ref Logs, PolicyDocument: {}}
  Jobs:
    Type: AWS::SQS::Queue
  Alarms:
    Type: AWS::SNS::Topic
    Properties: {DisplayName: Alarms}
`))
	if err != nil {
		log.Fatal(err)
	}
	proposed, err := cfn.Parse([]byte(`{"Resources": {
  "Logs": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "shop-logs-v2"}},
  "LogsPolicy": {"Type": "AWS::S3::BucketPolicy", "Properties": {"Bucket": {"Ref": "Logs"}, "PolicyDocument": {}}},
  "Alarms": {"Type": "AWS::SNS::Topic", "Properties": {"DisplayName": "Shop alarms"}},
  "Orders": {"Type": "AWS::DynamoDB::Table"}
}}`))
	if err != nil {
		log.Fatal(err)
	}

	d := cfndiff.Diff(deployed, proposed, cfndiff.Options{})
	for _, r := range d.Resources {
		var why []string
		for _, p := range r.Properties {
			if p.Changed {
				why = append(why, p.Name+" changes")
			}
			for _, ref := range p.ReplacedReferences {
				why = append(why, p.Name+" refers to "+ref+", which is replaced")
			}
		}
		fmt.Printf("%s %s (%s): %s", r.Impact.Symbol(), r.LogicalID, r.Type(), r.Impact)
		if len(why) > 0 {
			fmt.Printf(": %s", strings.Join(why, "; "))
		}
		fmt.Println()
	}
	// Output:
	// ~ Alarms (AWS::SNS::Topic): update: DisplayName changes
	// - Jobs (AWS::SQS::Queue): destroy
	// ± Logs (AWS::S3::Bucket): replace: BucketName changes
	// ± LogsPolicy (AWS::S3::BucketPolicy): replace: Bucket refers to Logs, which is replaced
	// + Orders (AWS::DynamoDB::Table): create
}
