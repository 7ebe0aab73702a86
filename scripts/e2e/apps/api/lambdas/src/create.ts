import { v4 as uuidv4 } from 'uuid';
import { db, PRIMARY_KEY, reply, TABLE_NAME } from './db';

export const handler = async (event: any = {}) => {
  if (!event.body) return reply(400, 'missing the request body');
  const item = typeof event.body === 'object' ? event.body : JSON.parse(event.body);
  item[PRIMARY_KEY] = uuidv4();
  await db.put({ TableName: TABLE_NAME, Item: item });
  return reply(201, { id: item[PRIMARY_KEY] });
};
