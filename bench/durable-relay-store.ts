// The durable relay's storage (bench/turns.ts): one message per commit, written
// the simplest way on the bench's engine, with the rule Parley follows: a
// message counts as stored once it is committed AND flushed, and only then is
// it forwarded. Not Parley's store code: a keyspace / table of its own.
//  - LMDB (a temp dir): lmdb-js's async `put`, which batches the puts of one
//    event-loop turn into one transaction (the batching Parley's store gets too),
//    then `flushed` (the fsync after the commit).
//  - PostgreSQL: one autocommit INSERT per message on a pool of Parley's default
//    size (10), fsync and synchronous_commit on (the bench's server).
import { open } from 'lmdb';
import pg from 'pg';
import { tempDir } from '../test/support/parley.ts';
import type { TestPostgres } from '../test/support/postgres.ts';
import { benchStorage } from './lib.ts';

export interface RelayMessage {
  conversationId: string;
  id: string;
  role: 'user' | 'assistant';
  text: string;
  at: number;
}

export interface DurableRelayStore {
  /** Resolves once the message is committed and flushed. */
  commit(m: RelayMessage): Promise<void>;
  /** Messages committed so far. */
  commits(): number;
  describe: string;
  close(): Promise<void>;
}

const PARLEY_DEFAULT_POOL_SIZE = 10;

export async function openDurableRelayStore(postgres: TestPostgres | undefined): Promise<DurableRelayStore> {
  let commits = 0;
  if (!postgres) {
    const root = open({ path: tempDir('bench-durable-relay-') });
    const messages = root.openDB<{ role: string; text: string; at: number }, string[]>({ name: 'messages' });
    return {
      async commit(m) {
        await messages.put([m.conversationId, m.id], { role: m.role, text: m.text, at: m.at });
        await root.flushed;
        commits++;
      },
      commits: () => commits,
      describe: 'LMDB put + flushed per message',
      close: () => root.close(),
    };
  }
  const pool = new pg.Pool({ connectionString: (await benchStorage(postgres))!.url, max: PARLEY_DEFAULT_POOL_SIZE });
  await pool.query(
    'CREATE TABLE relay_messages (conversation_id text NOT NULL, id text NOT NULL, role text NOT NULL, text text NOT NULL, at bigint NOT NULL, PRIMARY KEY (conversation_id, id))',
  );
  const insert = { name: 'relay_insert', text: 'INSERT INTO relay_messages (conversation_id, id, role, text, at) VALUES ($1, $2, $3, $4, $5)' };
  return {
    async commit(m) {
      await pool.query(Object.assign({ values: [m.conversationId, m.id, m.role, m.text, m.at] }, insert));
      commits++;
    },
    commits: () => commits,
    describe: `PostgreSQL INSERT per message (autocommit, pool of ${PARLEY_DEFAULT_POOL_SIZE})`,
    close: () => pool.end(),
  };
}
