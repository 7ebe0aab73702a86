package moto

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

// Each test proves one gap of moto that launcher.py closes, the way real CloudFormation behaves.

type cfnHelper struct {
	t   *testing.T
	ctx context.Context
	cfn *cloudformation.Client
}

func newCFN(t *testing.T) cfnHelper {
	srv := Start(t)
	return cfnHelper{t: t, ctx: context.Background(), cfn: cloudformation.NewFromConfig(srv.Config())}
}

// changeSet creates a change set for stack from template and returns its ARN.
func (h cfnHelper) changeSet(stack, name, template string) string {
	h.t.Helper()
	kind := cfntypes.ChangeSetTypeCreate
	if _, err := h.cfn.DescribeStacks(h.ctx, &cloudformation.DescribeStacksInput{StackName: &stack}); err == nil {
		kind = cfntypes.ChangeSetTypeUpdate
	}
	out, err := h.cfn.CreateChangeSet(h.ctx, &cloudformation.CreateChangeSetInput{StackName: &stack, ChangeSetName: &name,
		ChangeSetType: kind, TemplateBody: &template})
	if err != nil {
		h.t.Fatalf("create change set %s of %s: %v", name, stack, err)
	}
	return aws.ToString(out.Id)
}

// deploy creates and executes a change set; it returns the stack afterwards.
func (h cfnHelper) deploy(stack, template string) cfntypes.Stack {
	h.t.Helper()
	id := h.changeSet(stack, "cdkbot-test", template)
	if _, err := h.cfn.ExecuteChangeSet(h.ctx, &cloudformation.ExecuteChangeSetInput{StackName: &stack, ChangeSetName: &id}); err != nil {
		h.t.Fatalf("execute %s: %v", stack, err)
	}
	return h.stack(stack)
}

func (h cfnHelper) stack(name string) cfntypes.Stack {
	h.t.Helper()
	out, err := h.cfn.DescribeStacks(h.ctx, &cloudformation.DescribeStacksInput{StackName: &name})
	if err != nil {
		h.t.Fatalf("describe %s: %v", name, err)
	}
	return out.Stacks[0]
}

func (h cfnHelper) reasons(stack string) string {
	out, err := h.cfn.DescribeStackEvents(h.ctx, &cloudformation.DescribeStackEventsInput{StackName: &stack})
	if err != nil {
		h.t.Fatal(err)
	}
	var r []string
	for _, e := range out.StackEvents {
		r = append(r, aws.ToString(e.ResourceStatusReason))
	}
	return strings.Join(r, "\n")
}

const exporter = `{"Resources":{"Topic":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"shared"}}},
 "Outputs":{"TopicArn":{"Value":{"Ref":"Topic"},"Export":{"Name":"Exporter:TopicArn"}}}}`

const importer = `{"Resources":{"Topic":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"user"}}},
 "Outputs":{"Imported":{"Value":{"Fn::ImportValue":"Exporter:TopicArn"}}}}`

// Gaps 1 and 2: a stack deployed through a change set has its Outputs and Exports, and another
// change-set stack's Fn::ImportValue resolves to the exported value; an import of nothing fails.
func TestChangeSetStacksExportAndImport(t *testing.T) {
	h := newCFN(t)
	st := h.deploy("Exporter", exporter)
	if st.StackStatus != cfntypes.StackStatusCreateComplete || len(st.Outputs) != 1 ||
		aws.ToString(st.Outputs[0].OutputValue) != "arn:aws:sns:us-east-1:123456789012:shared" || aws.ToString(st.Outputs[0].ExportName) != "Exporter:TopicArn" {
		t.Fatalf("exporter: %s %+v", st.StackStatus, st.Outputs)
	}
	ex, err := h.cfn.ListExports(h.ctx, &cloudformation.ListExportsInput{})
	if err != nil || len(ex.Exports) != 1 || aws.ToString(ex.Exports[0].Name) != "Exporter:TopicArn" {
		t.Fatalf("exports: %+v %v", ex, err)
	}
	st = h.deploy("Importer", importer)
	if st.StackStatus != cfntypes.StackStatusCreateComplete || len(st.Outputs) != 1 || aws.ToString(st.Outputs[0].OutputValue) != "arn:aws:sns:us-east-1:123456789012:shared" {
		t.Fatalf("importer: %s %+v", st.StackStatus, st.Outputs)
	}
	st = h.deploy("Orphan", strings.ReplaceAll(importer, "Exporter:TopicArn", "Nobody:Arn"))
	if st.StackStatus != cfntypes.StackStatusRollbackComplete || !strings.Contains(h.reasons("Orphan"), "No export named Nobody:Arn found") {
		t.Errorf("orphan import: %s\n%s", st.StackStatus, h.reasons("Orphan"))
	}
}

// Gap 3: an export in use cannot be removed, by an update (which rolls back) or by deleting its stack.
func TestExportInUseCannotBeRemoved(t *testing.T) {
	h := newCFN(t)
	h.deploy("Exporter", exporter)
	h.deploy("Importer", importer)
	st := h.deploy("Exporter", `{"Resources":{"Topic":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"shared"}}}}`)
	if st.StackStatus != cfntypes.StackStatusUpdateRollbackComplete || len(st.Outputs) != 1 ||
		!strings.Contains(h.reasons("Exporter"), "Export Exporter:TopicArn cannot be deleted as it is in use by Importer") {
		t.Fatalf("update removing the export: %s %+v\n%s", st.StackStatus, st.Outputs, h.reasons("Exporter"))
	}
	if _, err := h.cfn.DeleteStack(h.ctx, &cloudformation.DeleteStackInput{StackName: aws.String("Exporter")}); err != nil {
		t.Fatal(err)
	}
	if st := h.stack("Exporter"); st.StackStatus != cfntypes.StackStatusDeleteFailed {
		t.Errorf("delete of an exporter in use: %s", st.StackStatus)
	}
	// Once nothing imports it, it goes.
	if _, err := h.cfn.DeleteStack(h.ctx, &cloudformation.DeleteStackInput{StackName: aws.String("Importer")}); err != nil {
		t.Fatal(err)
	}
	if st := h.deploy("Exporter", `{"Resources":{"Topic":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"shared"}}}}`); st.StackStatus != cfntypes.StackStatusUpdateComplete {
		t.Errorf("update once unused: %s", st.StackStatus)
	}
	if ex, _ := h.cfn.ListExports(h.ctx, &cloudformation.ListExportsInput{}); len(ex.Exports) != 0 {
		t.Errorf("exports left: %+v", ex.Exports)
	}
}

// Gap 4: executing a change set deletes the stack's change sets; the executed one is still
// described by its ARN.
func TestExecutingDeletesTheStacksChangeSets(t *testing.T) {
	h := newCFN(t)
	h.deploy("Svc", exporter)
	other := h.changeSet("Svc", "other", strings.ReplaceAll(exporter, "shared", "v2"))
	mine := h.changeSet("Svc", "mine", strings.ReplaceAll(exporter, "shared", "v3"))
	if _, err := h.cfn.ExecuteChangeSet(h.ctx, &cloudformation.ExecuteChangeSetInput{StackName: aws.String("Svc"), ChangeSetName: &mine}); err != nil {
		t.Fatal(err)
	}
	list, err := h.cfn.ListChangeSets(h.ctx, &cloudformation.ListChangeSetsInput{StackName: aws.String("Svc")})
	if err != nil || len(list.Summaries) != 0 {
		t.Errorf("change sets after execution: %+v %v", list, err)
	}
	if _, err := h.cfn.DescribeChangeSet(h.ctx, &cloudformation.DescribeChangeSetInput{ChangeSetName: &other}); err == nil {
		t.Error("the other change set must be gone")
	}
	d, err := h.cfn.DescribeChangeSet(h.ctx, &cloudformation.DescribeChangeSetInput{ChangeSetName: &mine})
	if err != nil || d.ExecutionStatus != cfntypes.ExecutionStatusExecuteComplete {
		t.Errorf("executed change set: %+v %v", d, err)
	}
}

// Gap 5: a change-set name is looked up in its stack only, and listing is per stack.
func TestChangeSetNamesArePerStack(t *testing.T) {
	h := newCFN(t)
	h.deploy("A", exporter)
	h.deploy("B", strings.ReplaceAll(strings.ReplaceAll(exporter, "shared", "b"), "Exporter:", "B:"))
	a := h.changeSet("A", "same", strings.ReplaceAll(exporter, "shared", "a2"))
	b := h.changeSet("B", "same", strings.ReplaceAll(strings.ReplaceAll(exporter, "shared", "b2"), "Exporter:", "B:"))
	d, err := h.cfn.DescribeChangeSet(h.ctx, &cloudformation.DescribeChangeSetInput{StackName: aws.String("A"), ChangeSetName: aws.String("same")})
	if err != nil || aws.ToString(d.ChangeSetId) != a {
		t.Errorf("describe A/same: %v %v", aws.ToString(d.ChangeSetId), err)
	}
	if _, err := h.cfn.DeleteChangeSet(h.ctx, &cloudformation.DeleteChangeSetInput{StackName: aws.String("B"), ChangeSetName: aws.String("same")}); err != nil {
		t.Fatal(err)
	}
	for stack, want := range map[string]string{"A": a, "B": ""} {
		list, err := h.cfn.ListChangeSets(h.ctx, &cloudformation.ListChangeSetsInput{StackName: aws.String(stack)})
		got := ""
		if err == nil && len(list.Summaries) == 1 {
			got = aws.ToString(list.Summaries[0].ChangeSetId)
		}
		if err != nil || got != want || len(list.Summaries) > 1 {
			t.Errorf("list %s: %+v %v, want %q", stack, list.Summaries, err, want)
		}
	}
	_ = b
	if _, err := h.cfn.ExecuteChangeSet(h.ctx, &cloudformation.ExecuteChangeSetInput{StackName: aws.String("B"), ChangeSetName: aws.String("same")}); err == nil ||
		!strings.Contains(err.Error(), "ChangeSet [same] does not exist") {
		t.Errorf("execute B/same after its deletion: %v", err)
	}
}

// Gap 6: a change set's Modify changes say whether CloudFormation replaces the resource and
// which properties recreate it, as DescribeChangeSet does in AWS.
func TestChangeSetChangesCarryReplacement(t *testing.T) {
	h := newCFN(t)
	const param = `{"Resources":{"P":{"Type":"AWS::SSM::Parameter","Properties":{"Name":"/a","Type":"String","Value":"v1"}},
 "T":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"t"}}}}`
	h.deploy("Params", param)
	edited := strings.NewReplacer(`"Name":"/a"`, `"Name":"/b"`, `"Value":"v1"`, `"Value":"v2"`).Replace(param)
	id := h.changeSet("Params", "review", strings.Replace(edited, `"TopicName":"t"`, `"TopicName":"t","DisplayName":"x"`, 1))
	out, err := h.cfn.DescribeChangeSet(h.ctx, &cloudformation.DescribeChangeSetInput{ChangeSetName: &id})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range out.Changes {
		rc := c.ResourceChange
		var props []string
		for _, d := range rc.Details {
			props = append(props, aws.ToString(d.Target.Name)+"="+string(d.Target.RequiresRecreation))
		}
		got[aws.ToString(rc.LogicalResourceId)] = string(rc.Action) + " " + string(rc.Replacement) + " " + strings.Join(props, ",")
	}
	if got["P"] != "Modify True Name=Always,Value=Never" || got["T"] != "Modify False DisplayName=Never" {
		t.Errorf("changes: %v", got)
	}
}

// Gap 7: drift detection answers as CloudFormation does: a parameter changed outside the stack
// is MODIFIED with its property difference, one deleted is DELETED, types it cannot check are
// NOT_CHECKED.
func TestDriftDetection(t *testing.T) {
	srv := Start(t)
	ctx := context.Background()
	cfn := cloudformation.NewFromConfig(srv.Config())
	const tpl = `{"Resources":{"A":{"Type":"AWS::SSM::Parameter","Properties":{"Name":"/a","Type":"String","Value":"v1"}},
 "B":{"Type":"AWS::SSM::Parameter","Properties":{"Name":"/b","Type":"String","Value":"v1"}},
 "C":{"Type":"AWS::SSM::Parameter","Properties":{"Name":"/c","Type":"String","Value":"v1"}},
 "T":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"t"}}}}`
	if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String("drifty"), TemplateBody: aws.String(tpl)}); err != nil {
		t.Fatal(err)
	}
	s := ssm.NewFromConfig(srv.Config())
	if _, err := s.PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String("/a"), Value: aws.String("console"), Overwrite: aws.Bool(true), Type: ssmtypes.ParameterTypeString}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteParameter(ctx, &ssm.DeleteParameterInput{Name: aws.String("/b")}); err != nil {
		t.Fatal(err)
	}
	det, err := cfn.DetectStackDrift(ctx, &cloudformation.DetectStackDriftInput{StackName: aws.String("drifty")})
	if err != nil {
		t.Fatal(err)
	}
	st, err := cfn.DescribeStackDriftDetectionStatus(ctx, &cloudformation.DescribeStackDriftDetectionStatusInput{StackDriftDetectionId: det.StackDriftDetectionId})
	if err != nil || st.DetectionStatus != cfntypes.StackDriftDetectionStatusDetectionComplete || st.StackDriftStatus != cfntypes.StackDriftStatusDrifted || aws.ToInt32(st.DriftedStackResourceCount) != 2 {
		t.Fatalf("status: %+v %v", st, err)
	}
	out, err := cfn.DescribeStackResourceDrifts(ctx, &cloudformation.DescribeStackResourceDriftsInput{StackName: aws.String("drifty")})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range out.StackResourceDrifts {
		diff := ""
		for _, p := range d.PropertyDifferences {
			diff += " " + aws.ToString(p.PropertyPath) + ":" + aws.ToString(p.ExpectedValue) + "->" + aws.ToString(p.ActualValue)
		}
		got[aws.ToString(d.LogicalResourceId)] = string(d.StackResourceDriftStatus) + diff
	}
	want := map[string]string{"A": "MODIFIED /Value:v1->console", "B": "DELETED", "C": "IN_SYNC", "T": "NOT_CHECKED"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	filtered, err := cfn.DescribeStackResourceDrifts(ctx, &cloudformation.DescribeStackResourceDriftsInput{StackName: aws.String("drifty"),
		StackResourceDriftStatusFilters: []cfntypes.StackResourceDriftStatus{cfntypes.StackResourceDriftStatusModified, cfntypes.StackResourceDriftStatusDeleted}})
	if err != nil || len(filtered.StackResourceDrifts) != 2 {
		t.Errorf("filtered: %d %v", len(filtered.StackResourceDrifts), err)
	}
}

// Not a gap, behaviour cdkbot's deploy relies on: a change set that only adds an export lists no
// resource changes yet is executable (CREATE_COMPLETE, AVAILABLE), as in CloudFormation
// (aws/aws-cdk#2029), and executing it publishes the export (gap 1); the same template again
// is FAILED with CloudFormation's "didn't contain changes".
func TestOutputsOnlyChangeSetIsExecutable(t *testing.T) {
	h := newCFN(t)
	bare := `{"Resources":{"Topic":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"shared"}}}}`
	h.deploy("Exporter", bare)
	id := h.changeSet("Exporter", "outputs", exporter)
	d, err := h.cfn.DescribeChangeSet(h.ctx, &cloudformation.DescribeChangeSetInput{ChangeSetName: &id})
	if err != nil || d.Status != cfntypes.ChangeSetStatusCreateComplete || d.ExecutionStatus != cfntypes.ExecutionStatusAvailable ||
		len(d.Changes) != 0 {
		t.Fatalf("outputs-only change set: %+v %v", d, err)
	}
	if _, err := h.cfn.ExecuteChangeSet(h.ctx, &cloudformation.ExecuteChangeSetInput{StackName: aws.String("Exporter"), ChangeSetName: &id}); err != nil {
		t.Fatal(err)
	}
	ex, err := h.cfn.ListExports(h.ctx, &cloudformation.ListExportsInput{})
	if err != nil || len(ex.Exports) != 1 || aws.ToString(ex.Exports[0].Name) != "Exporter:TopicArn" {
		t.Fatalf("exports after executing it: %+v %v", ex, err)
	}
	if st := h.deploy("Importer", importer); st.StackStatus != cfntypes.StackStatusCreateComplete {
		t.Errorf("importer: %s\n%s", st.StackStatus, h.reasons("Importer"))
	}
	same := h.changeSet("Exporter", "same", exporter)
	d, err = h.cfn.DescribeChangeSet(h.ctx, &cloudformation.DescribeChangeSetInput{ChangeSetName: &same})
	if err != nil || d.Status != cfntypes.ChangeSetStatusFailed || !strings.Contains(aws.ToString(d.StatusReason), "didn't contain changes") {
		t.Errorf("unchanged template: %+v %v", d, err)
	}
}

// Gap 8: UpdateTerminationProtection changes the flag DescribeStacks reports, as CloudFormation
// does (a change to it alone is no part of any change set).
func TestTerminationProtectionUpdates(t *testing.T) {
	h := newCFN(t)
	h.deploy("Guarded", `{"Resources": {"T": {"Type": "AWS::SNS::Topic"}}}`)
	for _, on := range []bool{true, false} {
		if _, err := h.cfn.UpdateTerminationProtection(h.ctx, &cloudformation.UpdateTerminationProtectionInput{
			StackName: aws.String("Guarded"), EnableTerminationProtection: aws.Bool(on)}); err != nil {
			t.Fatalf("update to %v: %v", on, err)
		}
		if got := aws.ToBool(h.stack("Guarded").EnableTerminationProtection); got != on {
			t.Errorf("after setting it %v, DescribeStacks says %v", on, got)
		}
	}
}

// apigateway reads path from moto's API Gateway REST API (the module has no API Gateway client):
// moto routes a request by the service its Authorization header's credential scope names.
func apigateway(t *testing.T, srv *Server, path string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=testing/20240101/"+Region+"/apigateway/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return out
}

func outputs(st cfntypes.Stack) map[string]string {
	out := map[string]string{}
	for _, o := range st.Outputs {
		out[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return out
}

// Gap 9: a method with a MOCK integration (CDK's CORS preflight) has no IntegrationHttpMethod or
// Uri, which API Gateway requires only of integrations that call a backend; it is created.
func TestMockIntegrationMethod(t *testing.T) {
	srv := Start(t)
	h := cfnHelper{t: t, ctx: context.Background(), cfn: cloudformation.NewFromConfig(srv.Config())}
	st := h.deploy("Api", `{"Resources":{
 "Api":{"Type":"AWS::ApiGateway::RestApi","Properties":{"Name":"api"}},
 "Preflight":{"Type":"AWS::ApiGateway::Method","Properties":{"RestApiId":{"Ref":"Api"},"ResourceId":{"Fn::GetAtt":["Api","RootResourceId"]},
  "HttpMethod":"OPTIONS","AuthorizationType":"NONE","MethodResponses":[{"StatusCode":"204"}],
  "Integration":{"Type":"MOCK","RequestTemplates":{"application/json":"{ statusCode: 200 }"},"IntegrationResponses":[{"StatusCode":"204"}]}}}},
 "Outputs":{"Id":{"Value":{"Ref":"Api"}},"Root":{"Value":{"Fn::GetAtt":["Api","RootResourceId"]}}}}`)
	if st.StackStatus != cfntypes.StackStatusCreateComplete {
		t.Fatalf("stack: %s %s", st.StackStatus, h.reasons("Api"))
	}
	out := outputs(st)
	integration := apigateway(t, srv, "/restapis/"+out["Id"]+"/resources/"+out["Root"]+"/methods/OPTIONS/integration")
	if integration["type"] != "MOCK" {
		t.Errorf("the OPTIONS method's integration: %v, want type MOCK", integration)
	}
}

// Gap 10: a change set creates what a resource DependsOn before it, as CloudFormation does: a
// REST API's Deployment (which needs its methods, and names them only in DependsOn) comes after
// its method, wherever the template lists it.
func TestChangeSetCreatesDependsOnFirst(t *testing.T) {
	srv := Start(t)
	h := cfnHelper{t: t, ctx: context.Background(), cfn: cloudformation.NewFromConfig(srv.Config())}
	st := h.deploy("Api", `{"Resources":{
 "Deployment":{"Type":"AWS::ApiGateway::Deployment","DependsOn":["Get"],"Properties":{"RestApiId":{"Ref":"Api"},"StageName":"prod"}},
 "Api":{"Type":"AWS::ApiGateway::RestApi","Properties":{"Name":"api"}},
 "Get":{"Type":"AWS::ApiGateway::Method","Properties":{"RestApiId":{"Ref":"Api"},"ResourceId":{"Fn::GetAtt":["Api","RootResourceId"]},
  "HttpMethod":"GET","AuthorizationType":"NONE",
  "Integration":{"Type":"HTTP_PROXY","IntegrationHttpMethod":"GET","Uri":"http://backend.internal/"}}}},
 "Outputs":{"Id":{"Value":{"Ref":"Api"}}}}`)
	if st.StackStatus != cfntypes.StackStatusCreateComplete {
		t.Fatalf("stack: %s %s", st.StackStatus, h.reasons("Api"))
	}
	deployments := apigateway(t, srv, "/restapis/"+outputs(st)["Id"]+"/deployments")
	if items, _ := deployments["item"].([]any); len(items) != 1 {
		t.Errorf("deployments: %v", deployments)
	}
}

// A VPC with two subnets, an application load balancer and a target group its listener forwards
// to; HEALTH is the target group's health-check path.
const loadBalanced = `{"Resources":{
 "Vpc":{"Type":"AWS::EC2::VPC","Properties":{"CidrBlock":"10.0.0.0/16"}},
 "A":{"Type":"AWS::EC2::Subnet","Properties":{"VpcId":{"Ref":"Vpc"},"CidrBlock":"10.0.0.0/24","AvailabilityZone":"us-east-1a"}},
 "B":{"Type":"AWS::EC2::Subnet","Properties":{"VpcId":{"Ref":"Vpc"},"CidrBlock":"10.0.1.0/24","AvailabilityZone":"us-east-1b"}},
 "Lb":{"Type":"AWS::ElasticLoadBalancingV2::LoadBalancer","Properties":{"Name":"web","Subnets":[{"Ref":"A"},{"Ref":"B"}]}},
 "Tg":{"Type":"AWS::ElasticLoadBalancingV2::TargetGroup","Properties":{"Name":"web-tg","Port":80,"Protocol":"HTTP",
  "VpcId":{"Ref":"Vpc"},"TargetType":"ip","HealthCheckPath":"HEALTH"}},
 "Listener":{"Type":"AWS::ElasticLoadBalancingV2::Listener","Properties":{"LoadBalancerArn":{"Ref":"Lb"},"Port":80,"Protocol":"HTTP",
  "DefaultActions":[{"Type":"forward","TargetGroupArn":{"Ref":"Tg"}}]}}},
 "Outputs":{"Tg":{"Value":{"Ref":"Tg"}},"Lb":{"Value":{"Ref":"Lb"}}OUTPUTS}}`

// Gap 11: Fn::GetAtt of a target group's and a load balancer's attributes CloudFormation
// documents (the full names CloudWatch metrics use are the ARN's tail after "targetgroup/" and
// "loadbalancer/").
func TestLoadBalancerAttributes(t *testing.T) {
	srv := Start(t)
	h := cfnHelper{t: t, ctx: context.Background(), cfn: cloudformation.NewFromConfig(srv.Config())}
	// A resource reads one too, as a CloudWatch alarm's dimension would.
	st := h.deploy("Web", strings.NewReplacer("HEALTH", "/", `"Listener":`, `"Dimension":{"Type":"AWS::SSM::Parameter","Properties":{"Name":"/web/tg",
  "Type":"String","Value":{"Fn::GetAtt":["Tg","TargetGroupFullName"]}}},
 "Listener":`, "OUTPUTS", `,
 "TgFull":{"Value":{"Fn::GetAtt":["Tg","TargetGroupFullName"]}},"TgName":{"Value":{"Fn::GetAtt":["Tg","TargetGroupName"]}},
 "TgArn":{"Value":{"Fn::GetAtt":["Tg","TargetGroupArn"]}},"TgLbs":{"Value":{"Fn::Join":[",",{"Fn::GetAtt":["Tg","LoadBalancerArns"]}]}},
 "LbArn":{"Value":{"Fn::GetAtt":["Lb","LoadBalancerArn"]}},
 "LbFull":{"Value":{"Fn::GetAtt":["Lb","LoadBalancerFullName"]}},"LbName":{"Value":{"Fn::GetAtt":["Lb","LoadBalancerName"]}}`).Replace(loadBalanced))
	if st.StackStatus != cfntypes.StackStatusCreateComplete {
		t.Fatalf("stack: %s %s", st.StackStatus, h.reasons("Web"))
	}
	out := outputs(st)
	if len(out) != 9 {
		t.Fatalf("outputs: %v, want 9", out)
	}
	_, tgTail, _ := strings.Cut(out["Tg"], ":targetgroup/")
	_, lbTail, _ := strings.Cut(out["Lb"], ":loadbalancer/")
	want := map[string]string{"TgFull": "targetgroup/" + tgTail, "TgName": "web-tg", "TgArn": out["Tg"], "TgLbs": out["Lb"],
		"LbFull": lbTail, "LbName": "web", "LbArn": out["Lb"]}
	for k, v := range want {
		if out[k] != v || v == "" {
			t.Errorf("%s: %q, want %q", k, out[k], v)
		}
	}
	if !strings.HasPrefix(lbTail, "app/web/") || !strings.HasPrefix(tgTail, "web-tg/") {
		t.Errorf("ARNs: %s %s", out["Lb"], out["Tg"])
	}
	p, err := ssm.NewFromConfig(srv.Config()).GetParameter(h.ctx, &ssm.GetParameterInput{Name: aws.String("/web/tg")})
	if err != nil || aws.ToString(p.Parameter.Value) != out["TgFull"] {
		t.Errorf("the parameter reading TargetGroupFullName: %v %v", p, err)
	}
}

// Gap 12: updating a resource moto cannot update from a template (a target group's health check)
// keeps it in the stack, as CloudFormation's in-place update does: same physical id, still listed,
// still referenced by a later update.
func TestResourceMotoCannotUpdateStays(t *testing.T) {
	h := newCFN(t)
	v1 := strings.NewReplacer("HEALTH", "/", "OUTPUTS", "").Replace(loadBalanced)
	arn := outputs(h.deploy("Web", v1))["Tg"]
	st := h.deploy("Web", strings.Replace(v1, `"HealthCheckPath":"/"`, `"HealthCheckPath":"/health"`, 1))
	if st.StackStatus != cfntypes.StackStatusUpdateComplete || outputs(st)["Tg"] != arn {
		t.Fatalf("health-check update: %s %v, want the target group %s\n%s", st.StackStatus, outputs(st), arn, h.reasons("Web"))
	}
	later := strings.Replace(v1, `"Outputs":{`, `"Outputs":{"Again":{"Value":{"Ref":"Tg"}},`, 1)
	st = h.deploy("Web", strings.Replace(later, `"HealthCheckPath":"/"`, `"HealthCheckPath":"/health"`, 1))
	if st.StackStatus != cfntypes.StackStatusUpdateComplete || outputs(st)["Again"] != arn {
		t.Errorf("a later update referencing it: %s %v\n%s", st.StackStatus, outputs(st), h.reasons("Web"))
	}
	res, err := h.cfn.DescribeStackResources(h.ctx, &cloudformation.DescribeStackResourcesInput{StackName: aws.String("Web")})
	found := false
	for _, r := range res.StackResources {
		found = found || aws.ToString(r.LogicalResourceId) == "Tg" && aws.ToString(r.PhysicalResourceId) == arn
	}
	if err != nil || !found {
		t.Errorf("resources: %v %v", res, err)
	}
}

// Gap 13: deleting a change set the stack does not have succeeds (the CDK CLI deletes its
// cdk-deploy-change-set before every update), and a missing change set is ChangeSetNotFound, as
// in CloudFormation; deleting one of a stack that does not exist still fails.
func TestMissingChangeSet(t *testing.T) {
	h := newCFN(t)
	h.deploy("Svc", exporter)
	name := aws.String("cdk-deploy-change-set")
	if _, err := h.cfn.DeleteChangeSet(h.ctx, &cloudformation.DeleteChangeSetInput{StackName: aws.String("Svc"), ChangeSetName: name}); err != nil {
		t.Errorf("delete of a change set the stack does not have: %v", err)
	}
	var notFound *cfntypes.ChangeSetNotFoundException
	_, err := h.cfn.DescribeChangeSet(h.ctx, &cloudformation.DescribeChangeSetInput{StackName: aws.String("Svc"), ChangeSetName: name})
	if !errors.As(err, &notFound) || !strings.Contains(err.Error(), "ChangeSet [cdk-deploy-change-set] does not exist") {
		t.Errorf("describe of a missing change set: %v, want ChangeSetNotFound", err)
	}
	if _, err := h.cfn.DeleteChangeSet(h.ctx, &cloudformation.DeleteChangeSetInput{StackName: aws.String("Nothing"), ChangeSetName: name}); err == nil {
		t.Error("delete of a change set of a stack that does not exist must fail")
	}
}

// Gap 14: UsePreviousValue of an SSM-typed parameter (the CDK CLI keeps BootstrapVersion so)
// keeps its SSM name, which the update resolves again to the parameter's current value.
func TestPreviousValueOfSSMParameter(t *testing.T) {
	srv := Start(t)
	h := cfnHelper{t: t, ctx: context.Background(), cfn: cloudformation.NewFromConfig(srv.Config())}
	s := ssm.NewFromConfig(srv.Config())
	put := func(v string) {
		if _, err := s.PutParameter(h.ctx, &ssm.PutParameterInput{Name: aws.String("/cdk-bootstrap/test/version"), Value: aws.String(v),
			Overwrite: aws.Bool(true), Type: ssmtypes.ParameterTypeString}); err != nil {
			t.Fatal(err)
		}
	}
	put("20")
	const tpl = `{"Parameters":{"BootstrapVersion":{"Type":"AWS::SSM::Parameter::Value<String>","Default":"/cdk-bootstrap/test/version"}},
 "Resources":{"T":{"Type":"AWS::SNS::Topic","Properties":{"TopicName":"TOPIC"}}},"Outputs":{"Version":{"Value":{"Ref":"BootstrapVersion"}}}}`
	if st := h.deploy("App", strings.Replace(tpl, "TOPIC", "t1", 1)); outputs(st)["Version"] != "20" {
		t.Fatalf("create: %s %v", st.StackStatus, outputs(st))
	}
	put("21")
	out, err := h.cfn.CreateChangeSet(h.ctx, &cloudformation.CreateChangeSetInput{StackName: aws.String("App"), ChangeSetName: aws.String("update"),
		ChangeSetType: cfntypes.ChangeSetTypeUpdate, TemplateBody: aws.String(strings.Replace(tpl, "TOPIC", "t2", 1)),
		Parameters: []cfntypes.Parameter{{ParameterKey: aws.String("BootstrapVersion"), UsePreviousValue: aws.Bool(true)}}})
	if err != nil {
		t.Fatalf("change set keeping BootstrapVersion: %v", err)
	}
	if _, err := h.cfn.ExecuteChangeSet(h.ctx, &cloudformation.ExecuteChangeSetInput{StackName: aws.String("App"), ChangeSetName: out.Id}); err != nil {
		t.Fatal(err)
	}
	if st := h.stack("App"); st.StackStatus != cfntypes.StackStatusUpdateComplete || outputs(st)["Version"] != "21" {
		t.Errorf("update: %s %v, want the parameter's current value 21", st.StackStatus, outputs(st))
	}
}
