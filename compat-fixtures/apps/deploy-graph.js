// Twelve stacks in moto's account (123456789012, us-east-1) with a dependency graph, resources
// moto_server can create (SNS topics, SSM parameters with names), stack outputs and a file
// asset, so `cdkbot deploy` runs end to end (bootstrap → publish → deploy) against the real
// bootstrap template, and the deploy benchmark has a graph to schedule. No cross-stack
// reference: moto registers no exports for stacks made through change sets (multi-env has one).
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
const stacks = {};
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
  stacks[id] = stack;
  for (const d of deps) stack.addDependency(stacks[d]);
}
app.synth();
