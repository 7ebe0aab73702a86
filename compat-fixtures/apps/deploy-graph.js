// Twelve stacks in moto's account (123456789012, us-east-1) with a dependency graph, resources
// moto_server can create (SNS topics, SSM parameters with names), stack outputs and a file
// asset, so `cdkbot deploy` runs end to end (bootstrap → publish → deploy) against the real
// bootstrap template, and the deploy benchmark has a graph to schedule. Real cross-stack
// references, two levels deep, as CDK makes them (an export in the producer, Fn::ImportValue in
// the consumer): Network's topic is imported by Data and Queue, Data's by Svc1 and Svc2.
'use strict';
const path = require('path');
const { core, s3assets } = require('./cdk');

const app = new core.App();
const env = { account: '123456789012', region: 'us-east-1' };
// stack: the stacks it depends on
const graph = {
  Network: [], Dns: [], Data: ['Network'], Queue: ['Network'], Auth: ['Network', 'Dns'],
  Svc1: ['Data', 'Auth'], Svc2: ['Data'], Svc3: ['Queue'], Svc4: ['Queue', 'Auth'], Svc5: ['Auth'],
  Api: ['Svc1', 'Svc2', 'Svc3'], Web: ['Api', 'Svc5'],
};
// consumer: the producer whose topic ARN it imports
const imports = { Data: 'Network', Queue: 'Network', Svc1: 'Data', Svc2: 'Data' };
const stacks = {};
const topics = {};
for (const [id, deps] of Object.entries(graph)) {
  const stack = new core.Stack(app, id, { env, stackName: `graph-${id.toLowerCase()}` });
  const topic = new core.CfnResource(stack, 'Topic', {
    type: 'AWS::SNS::Topic',
    properties: { TopicName: `graph-${id.toLowerCase()}` },
  });
  let value = topic.ref;
  if (id === 'Svc3') {
    const settings = new s3assets.Asset(stack, 'Settings', { path: path.join(__dirname, 'assets', 'config', 'settings.json') });
    value = settings.s3ObjectUrl;
  }
  new core.CfnResource(stack, 'Param', {
    type: 'AWS::SSM::Parameter',
    properties: { Name: `/graph/${id.toLowerCase()}`, Type: 'String', Value: value },
  });
  new core.CfnOutput(stack, 'TopicArn', { value: topic.ref });
  if (imports[id]) {
    new core.CfnResource(stack, 'Upstream', {
      type: 'AWS::SSM::Parameter',
      properties: { Name: `/graph/${id.toLowerCase()}/upstream`, Type: 'String', Value: topics[imports[id]].ref },
    });
  }
  stacks[id] = stack;
  topics[id] = topic;
  for (const d of deps) stack.addDependency(stacks[d]);
}
app.synth();
