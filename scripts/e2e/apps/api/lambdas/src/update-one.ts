import { db, PRIMARY_KEY, reply, TABLE_NAME } from './db';

export const handler = async (event: any = {}) => {
  const id = event.pathParameters?.id;
  if (!event.body || !id) return reply(400, 'missing the body or the id');
  const changes = typeof event.body === 'object' ? event.body : JSON.parse(event.body);
  const keys = Object.keys(changes);
  if (keys.length === 0) return reply(400, 'nothing to update');
  await db.update({
    TableName: TABLE_NAME,
    Key: { [PRIMARY_KEY]: id },
    UpdateExpression: 'set ' + keys.map((k, i) => `#k${i} = :v${i}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(keys.map((k, i) => [`#k${i}`, k])),
    ExpressionAttributeValues: Object.fromEntries(keys.map((k, i) => [`:v${i}`, changes[k]])),
  });
  return reply(204, '');
};
