// One stack whose template exceeds CloudFormation's 51,200-byte inline TemplateBody limit.
'use strict';
const { core } = require('./cdk');

const app = new core.App();
const stack = new core.Stack(app, 'Large', { env: { account: '111111111111', region: 'us-east-1' } });
for (let i = 0; i < 260; i++) {
  new core.CfnResource(stack, `Param${String(i).padStart(3, '0')}`, {
    type: 'AWS::SSM::Parameter',
    properties: {
      Type: 'String',
      Value: `value-${i}`,
      Description: `parameter ${i} of a template large enough to need an S3 template URL`,
    },
  });
}
app.synth();
