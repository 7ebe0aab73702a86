import { db, reply, TABLE_NAME } from './db';

export const handler = async () => {
  const res = await db.scan({ TableName: TABLE_NAME });
  return reply(200, res.Items ?? []);
};
