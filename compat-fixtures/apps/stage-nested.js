// A Stage (nested cloud assembly) holding a stack with a NestedStack.
'use strict';
const { core, Stage, NestedStack } = require('./cdk');

if (!Stage || !NestedStack) {
  console.error('stage-nested: this framework version has no Stage or NestedStack');
  process.exit(78); // generate.sh records the app as not applicable
}

const app = new core.App();

class Prod extends Stage {
  constructor(scope, id, props) {
    super(scope, id, props);
    const stack = new core.Stack(this, 'Api');
    const nested = new NestedStack(stack, 'Storage');
    const table = new core.CfnResource(nested, 'Table', {
      type: 'AWS::DynamoDB::Table',
      properties: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      },
    });
    new core.CfnResource(stack, 'Param', {
      type: 'AWS::SSM::Parameter',
      properties: { Type: 'String', Value: table.ref },
    });
  }
}

new Prod(app, 'Prod', { env: { account: '333333333333', region: 'us-west-2' } });
app.synth();
