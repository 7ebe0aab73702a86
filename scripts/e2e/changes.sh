# The pull requests of the two end-to-end apps, sourced by run.sh. Each function edits the app's
# working tree (the current directory, on a branch off main); run.sh commits the result.
# CHANGES: app branch expectation merge? description — "block" must fail the review, "pass" must
# not; "merge" changes are merged into release, which both tools deploy after main.
CHANGES=(
  "api api-tuning pass merge|functions get 15 s timeouts; the list handler pages its scan"
  "api api-outputs pass merge|the API's URL and the table's name become stack outputs"
  "api api-docs pass merge|README: how to call the API (docs only)"
  "api api-ddb-star block -|the create function is granted dynamodb:* on *"
  "api api-table-key block -|the custom-named table gains a sort key (a replacement CloudFormation refuses)"
  "platform plat-scale pass merge|three tasks, a new greeting, a faster health check"
  "platform plat-monitoring pass merge|a new monitoring stack alarms on the balancer's 5xx (new exports, imported)"
  "platform plat-docs pass merge|README: who owns the platform (docs only)"
  "platform plat-ssh-world block -|the bastion accepts SSH from 0.0.0.0/0"
  "platform plat-public-tasks block -|tasks run in public subnets with public IPs, off the NAT (the private subnets' exports, in use, go away)"
)
# A blocked change deployed anyway, on top of release, by both tools: the gate said CloudFormation
# refuses it, and both deploys must fail the same way (app branch).
BLOCKED_DEPLOY="platform plat-public-tasks"

replace() { # replace FILE OLD NEW: exactly one occurrence, or fail
  python3 - "$@" <<'PY'
import sys
path, old, new = sys.argv[1:4]
s = open(path).read()
if s.count(old) != 1:
    sys.exit(f"{path}: expected one {old!r}, found {s.count(old)}")
open(path, "w").write(s.replace(old, new))
PY
}

change_api-tuning() {
  replace lib/api-stack.ts "timeout: Duration.seconds(10)" "timeout: Duration.seconds(15)"
  replace lambdas/src/get-all.ts "db.scan({ TableName: TABLE_NAME })" "db.scan({ TableName: TABLE_NAME, Limit: 100 })"
}
change_api-outputs() {
  replace lib/api-stack.ts "import { Duration, Stack, StackProps } from 'aws-cdk-lib';" \
    "import { CfnOutput, Duration, Stack, StackProps } from 'aws-cdk-lib';"
  replace lib/api-stack.ts "    addCorsOptions(item);
" "    addCorsOptions(item);

    new CfnOutput(this, 'ApiUrl', { value: api.url });
    new CfnOutput(this, 'ItemsTableName', { value: props.table.tableName });
"
}
change_api-docs() {
  printf '\n## Calling it\n\n    curl -X POST "$URL/items" -d '"'"'{"name":"pen"}'"'"'\n    curl "$URL/items"\n' >>README.md
}
change_api-ddb-star() {
  replace lib/api-stack.ts "import { Runtime } from 'aws-cdk-lib/aws-lambda';" \
    "import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Runtime } from 'aws-cdk-lib/aws-lambda';"
  replace lib/api-stack.ts "    props.table.grantReadData(getOne);
" "    props.table.grantReadData(getOne);
    create.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:*'], resources: ['*'] }));
"
}
change_api-table-key() {
  replace lib/data-stack.ts "      partitionKey: { name: 'itemId', type: AttributeType.STRING },
" "      partitionKey: { name: 'itemId', type: AttributeType.STRING },
      sortKey: { name: 'createdAt', type: AttributeType.NUMBER },
"
}

change_plat-scale() {
  replace lib/service.ts "desiredCount: 2," "desiredCount: 3,"
  replace lib/service.ts "GREETING: 'hello'" "GREETING: 'hello, world'"
  replace lib/balancer.ts "interval: Duration.seconds(30)" "interval: Duration.seconds(15)"
}
change_plat-monitoring() {
  cat >lib/monitoring.ts <<'EOF'
import { Duration, Stack, StackProps } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import { HttpCodeTarget } from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { BalancerStack } from './balancer';

export interface MonitoringProps extends StackProps {
  balancer: BalancerStack;
}

export class MonitoringStack extends Stack {
  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id, props);
    const pager = new sns.Topic(this, 'Pager', { displayName: 'platform on-call' });
    const errors = props.balancer.targetGroup.metrics.httpCodeTarget(HttpCodeTarget.TARGET_5XX_COUNT, {
      period: Duration.minutes(1),
    });
    const alarm = new cloudwatch.Alarm(this, 'Web5xx', {
      metric: errors,
      threshold: 10,
      evaluationPeriods: 3,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new actions.SnsAction(pager));
  }
}
EOF
  replace bin/app.ts "import { BalancerStack } from '../lib/balancer';" "import { BalancerStack } from '../lib/balancer';
import { MonitoringStack } from '../lib/monitoring';"
  replace bin/app.ts "app.synth();" "new MonitoringStack(app, 'PlatformMonitoring', { balancer });
app.synth();"
}
change_plat-docs() {
  printf '\n## Owners\n\nThe platform team (#platform on chat). Changes to the network need two reviews.\n' >>README.md
}
change_plat-ssh-world() {
  replace lib/network.ts "ec2.Port.tcp(22), 'the office VPN');" "ec2.Port.tcp(22), 'the office VPN');
    this.bastionSecurityGroup.addIngressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(22), 'SSH while the VPN is down');"
}
change_plat-public-tasks() {
  replace lib/service.ts "vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }," \
    "vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC },
      assignPublicIp: true,"
}
