import { Duration, Stack, StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { Construct } from 'constructs';

export interface BalancerProps extends StackProps {
  vpc: ec2.IVpc;
}

export class BalancerStack extends Stack {
  readonly loadBalancer: elbv2.ApplicationLoadBalancer;
  readonly targetGroup: elbv2.ApplicationTargetGroup;

  constructor(scope: Construct, id: string, props: BalancerProps) {
    super(scope, id, props);
    this.loadBalancer = new elbv2.ApplicationLoadBalancer(this, 'Alb', { vpc: props.vpc, internetFacing: true });
    this.targetGroup = new elbv2.ApplicationTargetGroup(this, 'Web', {
      vpc: props.vpc,
      port: 8080,
      protocol: elbv2.ApplicationProtocol.HTTP,
      targetType: elbv2.TargetType.IP,
      healthCheck: { path: '/health', interval: Duration.seconds(30) },
    });
    this.loadBalancer.addListener('Http', { port: 80, defaultTargetGroups: [this.targetGroup] });
  }
}
