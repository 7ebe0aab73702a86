import { App } from 'aws-cdk-lib';
import { BalancerStack } from '../lib/balancer';
import { NetworkStack } from '../lib/network';
import { ServiceStack } from '../lib/service';

const app = new App();
const network = new NetworkStack(app, 'PlatformNetwork');
const balancer = new BalancerStack(app, 'PlatformBalancer', { vpc: network.vpc });
new ServiceStack(app, 'PlatformService', { vpc: network.vpc, balancer });
app.synth();
