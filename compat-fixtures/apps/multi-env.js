// Several environments with file and docker image assets and a cross-stack reference.
// In CDK v1 this synthesizes with the legacy synthesizer (asset parameters, aws:cdk:asset metadata);
// in v2 with the default modern synthesizer (asset manifests, bootstrap roles).
'use strict';
const path = require('path');
const { core, s3assets, ecrassets } = require('./cdk');

const app = new core.App();
const us = { account: '111111111111', region: 'us-east-1' };
const eu = { account: '222222222222', region: 'eu-west-1' };

const network = new core.Stack(app, 'Network', { env: us, description: 'shared network' });
const topic = new core.CfnResource(network, 'Topic', {
  type: 'AWS::SNS::Topic',
  properties: { DisplayName: 'shared' },
});

const service = new core.Stack(app, 'Service', {
  env: us,
  stackName: 'service-us',
  terminationProtection: true,
  tags: { team: 'core', app: 'compat' },
});
const site = new s3assets.Asset(service, 'Site', { path: path.join(__dirname, 'assets', 'web') });
const image = new ecrassets.DockerImageAsset(service, 'Image', {
  directory: path.join(__dirname, 'assets', 'image'),
  buildArgs: { GREETING: 'hello' },
});
new core.CfnResource(service, 'Queue', {
  type: 'AWS::SQS::Queue',
  properties: {
    Tags: [
      { Key: 'topic', Value: topic.ref },
      { Key: 'site', Value: site.s3ObjectUrl },
      { Key: 'image', Value: image.imageUri },
    ],
  },
});

const europe = new core.Stack(app, 'Europe', { env: eu });
const handler = new s3assets.Asset(europe, 'Handler', { path: path.join(__dirname, 'assets', 'handler', 'index.js') });
new core.CfnResource(europe, 'Param', {
  type: 'AWS::SSM::Parameter',
  properties: { Type: 'String', Value: handler.s3ObjectKey },
});

const agnostic = new core.Stack(app, 'Agnostic');
new core.CfnResource(agnostic, 'Param', {
  type: 'AWS::SSM::Parameter',
  properties: { Type: 'String', Value: 'anywhere' },
});

app.synth();
