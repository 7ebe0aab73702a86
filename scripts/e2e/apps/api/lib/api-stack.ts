import { Duration, Stack, StackProps } from 'aws-cdk-lib';
import { IResource, LambdaIntegration, MockIntegration, PassthroughBehavior, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { join } from 'path';

export interface ItemsApiProps extends StackProps {
  table: ITable;
}

export class ItemsApiStack extends Stack {
  constructor(scope: Construct, id: string, props: ItemsApiProps) {
    super(scope, id, props);

    const common: NodejsFunctionProps = {
      runtime: Runtime.NODEJS_22_X,
      memorySize: 256,
      timeout: Duration.seconds(10),
      depsLockFilePath: join(__dirname, '..', 'package-lock.json'),
      bundling: { externalModules: ['@aws-sdk/*'], minify: true },
      environment: { PRIMARY_KEY: 'itemId', TABLE_NAME: props.table.tableName },
    };
    const fn = (id: string, file: string) =>
      new NodejsFunction(this, id, { entry: join(__dirname, '..', 'lambdas', 'src', file), ...common });

    const getOne = fn('GetOneItem', 'get-one.ts');
    const getAll = fn('GetAllItems', 'get-all.ts');
    const create = fn('CreateItem', 'create.ts');
    const update = fn('UpdateItem', 'update-one.ts');
    const remove = fn('DeleteItem', 'delete-one.ts');
    props.table.grantReadData(getOne);
    props.table.grantReadData(getAll);
    props.table.grantReadWriteData(create);
    props.table.grantReadWriteData(update);
    props.table.grantReadWriteData(remove);

    const api = new RestApi(this, 'ItemsRestApi', { restApiName: 'Items Service' });
    const items = api.root.addResource('items');
    items.addMethod('GET', new LambdaIntegration(getAll));
    items.addMethod('POST', new LambdaIntegration(create));
    addCorsOptions(items);
    const item = items.addResource('{id}');
    item.addMethod('GET', new LambdaIntegration(getOne));
    item.addMethod('PATCH', new LambdaIntegration(update));
    item.addMethod('DELETE', new LambdaIntegration(remove));
    addCorsOptions(item);
  }
}

function addCorsOptions(resource: IResource) {
  resource.addMethod('OPTIONS', new MockIntegration({
    integrationResponses: [{
      statusCode: '200',
      responseParameters: {
        'method.response.header.Access-Control-Allow-Headers': "'Content-Type,Authorization'",
        'method.response.header.Access-Control-Allow-Origin': "'*'",
        'method.response.header.Access-Control-Allow-Methods': "'OPTIONS,GET,POST,PATCH,DELETE'",
      },
    }],
    passthroughBehavior: PassthroughBehavior.NEVER,
    requestTemplates: { 'application/json': '{"statusCode": 200}' },
  }), {
    methodResponses: [{
      statusCode: '200',
      responseParameters: {
        'method.response.header.Access-Control-Allow-Headers': true,
        'method.response.header.Access-Control-Allow-Methods': true,
        'method.response.header.Access-Control-Allow-Origin': true,
      },
    }],
  });
}
