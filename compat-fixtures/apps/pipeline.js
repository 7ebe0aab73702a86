// A CDK Pipelines app (aws-cdk-lib's pipelines module, v2 only): the Pipeline stack at the top
// and two Stages (Beta, Prod) of two stacks each in two environments, Prod behind a manual
// approval. `cdk deploy --all` deploys the pipeline alone; the Stage stacks are the pipeline's to
// deploy, or need explicit selection ('Prod/*').
'use strict';
const { major, core } = require('./cdk');

if (major !== 2 || !core.pipelines) {
  console.error('pipeline: CDK Pipelines (aws-cdk-lib pipelines) is a v2 module');
  process.exit(78);
}
const { pipelines } = core;

class Service extends core.Stage {
  constructor(scope, id, props) {
    super(scope, id, props);
    const data = new core.Stack(this, 'Data');
    const table = new core.CfnResource(data, 'Table', {
      type: 'AWS::DynamoDB::Table',
      properties: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      },
    });
    const api = new core.Stack(this, 'Api');
    new core.CfnResource(api, 'TableName', {
      type: 'AWS::SSM::Parameter',
      properties: { Name: `/${id.toLowerCase()}/table`, Type: 'String', Value: table.ref },
    });
  }
}

const app = new core.App();
const stack = new core.Stack(app, 'Pipeline', { env: { account: '123456789012', region: 'us-east-1' } });
const pipeline = new pipelines.CodePipeline(stack, 'Pipeline', {
  crossAccountKeys: true, // the stages deploy to other accounts
  synth: new pipelines.ShellStep('Synth', {
    input: pipelines.CodePipelineSource.gitHub('acme/shop', 'main'),
    commands: ['npm ci', 'npx cdk synth'],
  }),
});
pipeline.addStage(new Service(app, 'Beta', { env: { account: '111111111111', region: 'us-east-1' } }));
pipeline.addStage(new Service(app, 'Prod', { env: { account: '222222222222', region: 'eu-west-1' } }), {
  pre: [new pipelines.ManualApprovalStep('Approve')],
});
app.synth();
