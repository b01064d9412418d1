// One statement on a database of a test, over a connection of its own (closed before this resolves).
import pg from 'pg';

export async function sql<R>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as R[];
  } finally {
    await client.end();
  }
}
