import { db, PRIMARY_KEY, reply, TABLE_NAME } from './db';

export const handler = async (event: any = {}) => {
  const id = event.pathParameters?.id;
  if (!id) return reply(400, 'missing the path parameter id');
  const res = await db.get({ TableName: TABLE_NAME, Key: { [PRIMARY_KEY]: id } });
  return res.Item ? reply(200, res.Item) : reply(404, 'not found');
};
