// The run's one PostgreSQL server (started by test/global-setup.ts), seen from a test file. Give each
// test file (or test) its own empty database on it; a test that stops or kills the server starts
// its own with startPostgres() instead, so the other files running meanwhile keep theirs.
import { inject } from 'vitest';
import { createDatabase, MIGRATED_TEMPLATE } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared server's superuser URL on its `postgres` database. */
    postgresUrl: string;
  }
}

/** The shared server's superuser URL (`postgres://postgres@127.0.0.1:PORT/postgres`). */
export function sharedPostgresUrl(): string {
  return inject('postgresUrl');
}

/** A new empty database on the shared server (a random name by default); resolves to its URL. */
export function createTestDatabase(name?: string): Promise<string> {
  return createDatabase(sharedPostgresUrl(), name);
}

/** A new database on the shared server with every migration applied, as Parley leaves it at its first start. */
export function createMigratedTestDatabase(name?: string): Promise<string> {
  return createDatabase(sharedPostgresUrl(), name, { template: MIGRATED_TEMPLATE });
}
