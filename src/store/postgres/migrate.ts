// Versioned SQL migrations (migrations/NNN_name.sql), applied in order when the store opens, each in its own
// transaction, under a session advisory lock so that processes starting together apply each one once. Applied
// versions are recorded in parley_schema_migrations. A database migrated further than this build knows is refused.
// Append only: never edit or renumber a migration that has shipped.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClientBase } from 'pg';
import { StoreOpenError } from '../errors.ts';
import { describePermissionError, isPermissionError } from './permission-error.ts';

export interface SqlMigration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

const FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;

export function loadMigrations(dir = MIGRATIONS_DIR): SqlMigration[] {
  const list = readdirSync(dir)
    .filter((f) => FILE.test(f))
    .sort()
    .map((f) => {
      const [, version, name] = FILE.exec(f) as RegExpExecArray;
      return { version: Number(version), name, sql: readFileSync(join(dir, f), 'utf8') };
    });
  list.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations in ${dir} must be numbered 001, 002, … without gaps (found ${m.version} at ${i + 1})`);
  });
  return list;
}

export const latestVersion = (list: SqlMigration[]) => list.length;

/** `ok`, or what is off, as `checks().migrations` reports it. */
export function migrationState(applied: number, latest: number): string {
  if (applied === latest) return 'ok';
  return applied < latest ? `pending (at ${applied}, latest ${latest})` : `data is newer (${applied}) than this build (${latest})`;
}

export const APPLIED_VERSION = 'SELECT coalesce(max(version), 0) AS version FROM parley_schema_migrations';

const LOCK = `SELECT pg_advisory_lock(hashtextextended('parley:migrations', 0))`;
const UNLOCK = `SELECT pg_advisory_unlock(hashtextextended('parley:migrations', 0))`;

/** Applies what the database lacks; resolves with the version it is at. Runs on one dedicated connection. */
export async function migrate(client: ClientBase, list: SqlMigration[], location: string): Promise<number> {
  const latest = latestVersion(list);
  await client.query(LOCK);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS parley_schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    let version = (await client.query<{ version: number }>(APPLIED_VERSION)).rows[0].version;
    if (version > latest) {
      throw new StoreOpenError(
        `the PostgreSQL database at ${location} is at schema version ${version}, newer than this build of Parley knows (${latest}): run a newer Parley`,
      );
    }
    for (const m of list.filter((x) => x.version > version)) {
      try {
        await client.query('BEGIN');
        await client.query(m.sql);
        await client.query('INSERT INTO parley_schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        if (isPermissionError(err)) throw err;
        throw new StoreOpenError(`PostgreSQL migration ${String(m.version).padStart(3, '0')}_${m.name} failed at ${location}: ${(err as Error).message}`);
      }
      version = m.version;
    }
    return version;
  } catch (err) {
    // A role without the rights to create Parley's tables: say which role, where, and the grant that fixes it.
    if (isPermissionError(err)) throw new StoreOpenError(await describePermissionError(client, err));
    throw err;
  } finally {
    await client.query(UNLOCK).catch(() => undefined);
  }
}
