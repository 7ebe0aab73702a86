// Framework shim for the compat-fixture apps: the same app code synthesizes with CDK v1
// (@aws-cdk/* modules) and v2 (aws-cdk-lib). generate.sh sets CDKBOT_FIXTURE_MAJOR.
'use strict';

const major = process.env.CDKBOT_FIXTURE_MAJOR || '2';

function optional(name) {
  try {
    return require(name);
  } catch (e) {
    return undefined;
  }
}

if (major === '1') {
  const core = require('@aws-cdk/core');
  const cfn = optional('@aws-cdk/aws-cloudformation');
  module.exports = {
    major: 1,
    core,
    Construct: core.Construct,
    s3assets: require('@aws-cdk/aws-s3-assets'),
    ecrassets: require('@aws-cdk/aws-ecr-assets'),
    Stage: core.Stage, // undefined before ~1.49
    NestedStack: core.NestedStack || (cfn && cfn.NestedStack),
  };
} else {
  const lib = require('aws-cdk-lib');
  module.exports = {
    major: 2,
    core: lib,
    Construct: require('constructs').Construct,
    s3assets: lib.aws_s3_assets,
    ecrassets: lib.aws_ecr_assets,
    Stage: lib.Stage,
    NestedStack: lib.NestedStack,
  };
}
