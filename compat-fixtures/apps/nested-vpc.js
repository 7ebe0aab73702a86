// A stack whose network lives in a CDK NestedStack: the VPC is a nested stack's resource and the
// parent's security group and parameter read its id through the nested stack's output (CDK makes
// the Output and the parent's Fn::GetAtt Nested.Outputs.X). The case where a replacement must
// cross the nested-stack boundary: the VPC replaced inside, the parent's security group too. And
// the other way: the parent's alarm topic reaches the nested stack as a parameter (CDK makes the
// nested Parameter and the parent's Parameters entry), so replacing the topic changes the nested
// stack's parameter that holds it.
'use strict';
const { core, NestedStack } = require('./cdk');

if (!NestedStack) {
  console.error('nested-vpc: this framework version has no NestedStack');
  process.exit(78); // generate.sh records the app as not applicable
}

const app = new core.App();
const stack = new core.Stack(app, 'Service', { env: { account: '123456789012', region: 'us-east-1' } });
const network = new NestedStack(stack, 'Network');
const vpc = new core.CfnResource(network, 'Vpc', {
  type: 'AWS::EC2::VPC',
  properties: { CidrBlock: '10.0.0.0/16', EnableDnsSupport: true },
});
new core.CfnResource(stack, 'ServiceSg', {
  type: 'AWS::EC2::SecurityGroup',
  properties: {
    GroupDescription: 'service',
    VpcId: vpc.ref,
    SecurityGroupIngress: [{ IpProtocol: 'tcp', FromPort: 443, ToPort: 443, CidrIp: '10.0.0.0/16' }],
  },
});
new core.CfnResource(stack, 'VpcIdParam', {
  type: 'AWS::SSM::Parameter',
  properties: { Name: '/service/vpc-id', Type: 'String', Value: vpc.ref },
});
const alarms = new core.CfnResource(stack, 'Alarms', { type: 'AWS::SNS::Topic', properties: { TopicName: 'service-alarms' } });
new core.CfnResource(network, 'AlarmTopicParam', {
  type: 'AWS::SSM::Parameter',
  properties: { Name: '/network/alarm-topic', Type: 'String', Value: alarms.ref },
});
app.synth();
