import { App } from 'aws-cdk-lib';
import { ItemsApiStack } from '../lib/api-stack';
import { ItemsDataStack } from '../lib/data-stack';

const app = new App();
const data = new ItemsDataStack(app, 'ItemsData');
new ItemsApiStack(app, 'ItemsApi', { table: data.table });
app.synth();
