// The app behind this package's test data: synthesized by generate.sh with the real aws-cdk-lib
// (CDKBOT_SIDE=base or head), so validation-report.json and the manifest's annotations are what
// the framework writes. A policy validation plugin (RFC 477) reports an error and a warning; the
// built-in template validation (CloudFormation Validate) finds a bad property; annotations
// (what cdk-nag writes) warn and inform. The head renames one bucket's construct (a move) and
// adds a finding of each kind, so some findings are new and some are already on the base.
'use strict';
const fs = require('fs');
const cdk = require('aws-cdk-lib');
const s3 = require('aws-cdk-lib/aws-s3');
const sns = require('aws-cdk-lib/aws-sns');

const head = process.env.CDKBOT_SIDE === 'head';

// A plugin is a plain object with a name and validate(); it reads the templates it is given.
const encryptionPlugin = {
  name: 'bucket-encryption',
  version: '1.2.0',
  validate(context) {
    const violations = [];
    for (const file of context.templatePaths) {
      const template = JSON.parse(fs.readFileSync(file, 'utf8'));
      for (const [id, r] of Object.entries(template.Resources || {})) {
        if (r.Type !== 'AWS::S3::Bucket') continue;
        if (!(r.Properties || {}).BucketEncryption) {
          violations.push({
            ruleName: 'S3_BUCKET_ENCRYPTION',
            description: 'Bucket has no BucketEncryption configured',
            fix: 'Set encryption: s3.BucketEncryption.KMS_MANAGED',
            severity: 'error',
            violatingResources: [{ resourceLogicalId: id, templatePath: file, locations: ['Properties/BucketEncryption'] }],
          });
        }
        if (!(r.Properties || {}).VersioningConfiguration) {
          violations.push({
            ruleName: 'S3_BUCKET_VERSIONING',
            description: 'Bucket versioning is off',
            severity: 'warning',
            violatingResources: [{ resourceLogicalId: id, templatePath: file, locations: ['Properties'] }],
          });
        }
      }
    }
    return { success: !violations.some((v) => v.severity === 'error'), violations };
  },
};

const app = new cdk.App({
  policyValidationBeta1: [encryptionPlugin],
  context: {
    // The CLI, not the app, decides what validation errors do: the app writes the report and succeeds.
    '@aws-cdk/core:failSynthOnValidationErrors': false,
  },
});

const env = { account: '111111111111', region: 'eu-west-1' };
const data = new cdk.Stack(app, 'Data', { env });
new s3.Bucket(data, 'Logs', { versioned: true, encryption: s3.BucketEncryption.S3_MANAGED });
// The head gives the Archive bucket a new construct id: same type, same properties, a new logical id.
const archive = new s3.Bucket(data, head ? 'ArchiveV2' : 'Archive', { versioned: true });
cdk.Annotations.of(archive).addWarningV2('AwsSolutions-S1', 'The S3 Bucket has server access logs disabled.');
cdk.Annotations.of(data).addInfo('Data holds the buckets of record.');

const events = new cdk.Stack(app, 'Events', { env });
const topic = new sns.Topic(events, 'Alarms');
// A property the resource specification does not have: the template validator reports it.
topic.node.defaultChild.addPropertyOverride('DisplayNam', 'alarms');
if (head) {
  new s3.Bucket(events, 'Scratch');
  cdk.Annotations.of(topic).addWarningV2('AwsSolutions-SNS3', 'The SNS Topic does not require publishers to use SSL.');
}
app.synth();
