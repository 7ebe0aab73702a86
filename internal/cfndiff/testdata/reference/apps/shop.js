// A realistic three-stack app (network, data, service) synthesized twice by record.sh:
// SHOP_VARIANT=before and SHOP_VARIANT=after. The "after" variant is a typical risky PR:
// it renames the table (replacement), opens HTTPS to the world, grants the function write
// access, retains the bucket, drops the dead-letter queue and retags the service.
'use strict';
const cdk = require('aws-cdk-lib');
const { aws_ec2: ec2, aws_dynamodb: ddb, aws_s3: s3, aws_sqs: sqs, aws_lambda: lambda, aws_iam: iam } = cdk;

const after = process.env.SHOP_VARIANT === 'after';
const app = new cdk.App();
const env = { account: '123456789012', region: 'eu-west-1' };

const network = new cdk.Stack(app, 'ShopNetwork', { env });
const vpc = new ec2.Vpc(network, 'Vpc', { maxAzs: 2, natGateways: 0, subnetConfiguration: [{ name: 'public', subnetType: ec2.SubnetType.PUBLIC }] });
const sg = new ec2.SecurityGroup(network, 'ServiceSg', { vpc, description: 'shop service', allowAllOutbound: false });
sg.addIngressRule(ec2.Peer.ipv4('10.0.0.0/16'), ec2.Port.tcp(8080), 'internal');
if (after) {
  sg.addIngressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'public https');
}

const data = new cdk.Stack(app, 'ShopData', { env });
const table = new ddb.Table(data, 'Orders', {
  tableName: after ? 'shop-orders-v2' : 'shop-orders',
  partitionKey: { name: 'pk', type: ddb.AttributeType.STRING },
  billingMode: ddb.BillingMode.PAY_PER_REQUEST,
});
const bucket = new s3.Bucket(data, 'Receipts', {
  versioned: after,
  removalPolicy: after ? cdk.RemovalPolicy.RETAIN : cdk.RemovalPolicy.DESTROY,
});
if (!after) {
  new sqs.Queue(data, 'DeadLetters', { retentionPeriod: cdk.Duration.days(14) });
}

const service = new cdk.Stack(app, 'ShopService', { env });
cdk.Tags.of(service).add('team', after ? 'payments' : 'shop');
const fn = new lambda.Function(service, 'Checkout', {
  runtime: lambda.Runtime.NODEJS_20_X,
  handler: 'index.handler',
  code: lambda.Code.fromInline('exports.handler = async () => ({ statusCode: 200 });'),
  environment: { TABLE: table.tableName, BUCKET: bucket.bucketName },
  memorySize: after ? 512 : 256,
});
table.grantReadData(fn);
if (after) {
  table.grantWriteData(fn);
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [bucket.arnForObjects('*')] }));
}
new ssmParam(service, 'SgId', sg.securityGroupId);

function ssmParam(scope, id, value) {
  return new cdk.aws_ssm.StringParameter(scope, id, { stringValue: value });
}

app.synth();
