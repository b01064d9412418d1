// Which storage engine a test's Parley runs on: LMDB, or PostgreSQL when the run sets PARLEY_TEST_ENGINE=postgres
// (vitest.config.ts runs the integration and security suites once per engine). On PostgreSQL a test's storage path
// stands for a database named after it on the run's shared server, so a Parley restarted on the same path (a crash
// test) finds the same data, as it would find the same LMDB directory.
import { createHash } from 'node:crypto';
import type { ConfigInput } from '../../src/config/schema.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import type { Store } from '../../src/store/repos.ts';
import { databaseUrl } from './postgres.ts';
import { createMigratedTestDatabase, sharedPostgresUrl } from './shared-postgres.ts';
import { openTestStore } from './store.ts';

export type TestEngine = 'lmdb' | 'postgres';

export function testEngine(): TestEngine {
  const engine = process.env.PARLEY_TEST_ENGINE ?? 'lmdb';
  if (engine !== 'lmdb' && engine !== 'postgres') throw new Error(`PARLEY_TEST_ENGINE=${engine}: use lmdb or postgres`);
  return engine;
}

const DUPLICATE_DATABASE = '42P04';

/** The database standing for `storagePath` (created on first use). */
export async function postgresUrlFor(storagePath: string): Promise<string> {
  const name = `t_${createHash('sha256').update(storagePath).digest('hex').slice(0, 24)}`;
  try {
    return await createMigratedTestDatabase(name);
  } catch (err) {
    if ((err as { code?: string }).code === DUPLICATE_DATABASE) return databaseUrl(sharedPostgresUrl(), name);
    throw err;
  }
}

/** `input` on the run's engine: unchanged on LMDB, or when the test chose an engine itself. */
export async function onTestEngine(input: ConfigInput, storagePath: string): Promise<ConfigInput> {
  const storage = (input.storage ?? {}) as { engine?: string };
  if (testEngine() === 'lmdb' || storage.engine !== undefined) return input;
  return Object.assign({}, input, { storage: Object.assign({}, storage, { engine: 'postgres', url: await postgresUrlFor(storagePath) }) });
}

/** The store a test's Parley used at `storagePath`, opened beside it (or after it stopped) on the run's engine. */
export async function openRunStore(storagePath: string): Promise<Store> {
  if (testEngine() === 'lmdb') return openTestStore(storagePath);
  return openPostgresStore({ url: await postgresUrlFor(storagePath) });
}
