// The engines the store contract suite runs on. Each contract file (test/store/*.test.ts) is written once as
// `describe…Contract(name, open)` and runs for every engine here. `open` gives a store with no data in it.
import pg from 'pg';
import type { Store } from '../../src/store/repos.ts';
import { openLmdbStore } from '../../src/store/lmdb/index.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { tempDir } from '../support/tmp.ts';
import { createTestDatabase } from '../support/shared-postgres.ts';

export interface EngineUnderTest {
  name: string;
  open(): Promise<Store>;
  /**
   * Another process's view of the data `first` holds: a second store on the same PostgreSQL database; for LMDB, which
   * one process holds, `first` itself. Close it before `first` (closing `first` twice is harmless).
   */
  sibling(first: Store): Promise<Store>;
}

/** Every table but the migrations record emptied: much faster than a new database (and its migrations) per test. */
const EMPTY_TABLES = `DO $$ DECLARE t record; BEGIN
  FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'parley_schema_migrations' LOOP
    EXECUTE 'DELETE FROM ' || quote_ident(t.tablename);
  END LOOP;
END $$`;

/** One database per test file on the run's shared server (created on first use), emptied before each store is opened on it. */
export function postgresEngine(): EngineUnderTest {
  let url: Promise<string> | undefined;
  return {
    name: 'postgres',
    async open() {
      url ??= createTestDatabase();
      const client = new pg.Client({ connectionString: await url });
      await client.connect();
      try {
        await client.query(EMPTY_TABLES);
      } finally {
        await client.end();
      }
      return openPostgresStore({ url: await url });
    },
    async sibling() {
      if (!url) throw new Error('open a store first');
      return openPostgresStore({ url: await url });
    },
  };
}

/** A new LMDB store in a temp dir for each open (a small disk reserve: a run opens many). */
export function lmdbEngine(): EngineUnderTest {
  return { name: 'lmdb', open: () => openLmdbStore({ path: tempDir('parley-store-'), diskReserveMb: 1 }), sibling: async (first) => first };
}

export const engines: EngineUnderTest[] = [lmdbEngine(), postgresEngine()];
