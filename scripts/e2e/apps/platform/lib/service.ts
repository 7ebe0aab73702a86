import { Stack, StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { Construct } from 'constructs';
import { join } from 'path';
import { BalancerStack } from './balancer';

export interface ServiceProps extends StackProps {
  vpc: ec2.IVpc;
  balancer: BalancerStack;
}

export class ServiceStack extends Stack {
  constructor(scope: Construct, id: string, props: ServiceProps) {
    super(scope, id, props);
    const cluster = new ecs.Cluster(this, 'Cluster', { vpc: props.vpc });
    const task = new ecs.FargateTaskDefinition(this, 'Task', { cpu: 256, memoryLimitMiB: 512 });
    task.addContainer('web', {
      image: ecs.ContainerImage.fromAsset(join(__dirname, '..', 'image')),
      portMappings: [{ containerPort: 8080 }],
      environment: { GREETING: 'hello' },
      logging: ecs.LogDrivers.awsLogs({ streamPrefix: 'web' }),
    });
    const sg = new ec2.SecurityGroup(this, 'WebSg', { vpc: props.vpc, description: 'the web tasks' });
    sg.connections.allowFrom(props.balancer.loadBalancer, ec2.Port.tcp(8080), 'from the load balancer');
    const service = new ecs.FargateService(this, 'Web', {
      cluster,
      taskDefinition: task,
      desiredCount: 2,
      minHealthyPercent: 100,
      circuitBreaker: { rollback: true },
      securityGroups: [sg],
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
    });
    service.attachToApplicationTargetGroup(props.balancer.targetGroup);
  }
}
