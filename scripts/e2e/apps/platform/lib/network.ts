import { Stack, StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';

export class NetworkStack extends Stack {
  readonly vpc: ec2.Vpc;
  readonly bastionSecurityGroup: ec2.SecurityGroup;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr('10.20.0.0/16'),
      maxAzs: 2,
      natGateways: 1,
    });
    this.bastionSecurityGroup = new ec2.SecurityGroup(this, 'Bastion', {
      vpc: this.vpc,
      description: 'Operators reach the private subnets through the bastion',
    });
    this.bastionSecurityGroup.addIngressRule(ec2.Peer.ipv4('10.99.0.0/16'), ec2.Port.tcp(22), 'the office VPN');
  }
}
