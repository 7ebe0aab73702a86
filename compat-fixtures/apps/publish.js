// Assets for the publish integration tests: one stack in moto's account (123456789012, us-east-1)
// with a zipped directory, two single files and a docker image, so `cdkbot publish` can run
// against the real bootstrap template deployed into moto_server.
'use strict';
const path = require('path');
const { core, s3assets, ecrassets } = require('./cdk');

const app = new core.App();
const stack = new core.Stack(app, 'Publish', { env: { account: '123456789012', region: 'us-east-1' } });
const assets = [
  new s3assets.Asset(stack, 'Site', { path: path.join(__dirname, 'assets', 'site') }),
  new s3assets.Asset(stack, 'Handler', { path: path.join(__dirname, 'assets', 'handler', 'index.js') }),
  new s3assets.Asset(stack, 'Settings', { path: path.join(__dirname, 'assets', 'config', 'settings.json') }),
];
const image = new ecrassets.DockerImageAsset(stack, 'Image', {
  directory: path.join(__dirname, 'assets', 'image'),
  buildArgs: { GREETING: 'published' },
});
assets.forEach((a, i) => {
  new core.CfnResource(stack, `Object${i}`, {
    type: 'AWS::SSM::Parameter',
    properties: { Type: 'String', Value: a.s3ObjectUrl },
  });
});
new core.CfnResource(stack, 'ImageUri', {
  type: 'AWS::SSM::Parameter',
  properties: { Type: 'String', Value: image.imageUri },
});
app.synth();
