// The PostgreSQL engine's schema: versioned SQL migrations applied when a store opens, under an advisory lock,
// recorded in parley_schema_migrations; a database newer than the build is refused; a failing migration leaves
// nothing behind.
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { StoreOpenError } from '../../src/store/errors.ts';
import { loadMigrations, MIGRATIONS_DIR } from '../../src/store/postgres/migrate.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import type { Store } from '../../src/store/repos.ts';
import { createTestDatabase } from '../support/shared-postgres.ts';
import { sql } from '../support/sql.ts';

const applied = (url: string) => sql<{ version: number; name: string }>(url, 'SELECT version, name FROM parley_schema_migrations ORDER BY version');

/** The shipped migrations plus `extra` ones, in a directory of their own. */
function migrationsWith(extra: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'parley-migrations-'));
  for (const m of loadMigrations()) {
    const file = `${String(m.version).padStart(3, '0')}_${m.name}.sql`;
    copyFileSync(join(MIGRATIONS_DIR, file), join(dir, file));
  }
  for (const [file, text] of Object.entries(extra)) writeFileSync(join(dir, file), text);
  return dir;
}

/** The shipped migrations, as recorded once applied. */
const shipped = loadMigrations().map((m) => ({ version: m.version, name: m.name }));
const LATEST = shipped.length;
/** The file name of the migration after the shipped ones (plus `ahead`). */
const nextFile = (name: string, ahead = 0) => `${String(LATEST + 1 + ahead).padStart(3, '0')}_${name}.sql`;

describe('postgres: migrations', () => {
  const opened: Store[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  const open = async (o: Parameters<typeof openPostgresStore>[0]) => {
    const s = await openPostgresStore(o);
    opened.push(s);
    return s;
  };

  it('a new database gets every table, recorded as applied, and checks report ok', async () => {
    const url = await createTestDatabase();
    const store = await open({ url });
    expect(await applied(url)).toEqual(shipped);
    expect(store.checks()).toEqual({ database: 'ok', migrations: 'ok' });
    const tables = (await sql<{ tablename: string }>(url, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)).map(
      (t) => t.tablename,
    );
    expect(tables).toEqual([
      'agent_credentials',
      'agents',
      'bus_payloads',
      'conversation_inbox',
      'conversation_outcomes',
      'conversation_owners',
      'conversations',
      'customer_identities',
      'customers',
      'inbox_notes',
      'inbox_reads',
      'inbox_threads',
      'job_dead_letters',
      'job_ids',
      'jobs',
      'knowledge_articles',
      'knowledge_chunks',
      'magic_links',
      'messages',
      'nodes',
      'parley_schema_migrations',
      'proactive_dedup',
      'proactive_sends',
      'saved_replies',
      'telemetry_events',
      'telemetry_turn_calls',
      'wa_deliveries',
      'wa_early_statuses',
      'wa_handled',
      'wa_send_attempts',
      'wa_sent',
    ]);
  });

  it('processes opening one database at once apply each migration once', async () => {
    const url = await createTestDatabase();
    const stores = await Promise.all(Array.from({ length: 5 }, () => open({ url })));
    expect(stores.map((s) => s.checks().migrations)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(await applied(url)).toEqual(shipped);
  });

  it('a later build applies only what is new, in order', async () => {
    const url = await createTestDatabase();
    await (await open({ url })).close();
    const dir = migrationsWith({
      [nextFile('notes')]: 'CREATE TABLE notes (id text PRIMARY KEY);',
      [nextFile('more_notes', 1)]: "INSERT INTO notes VALUES ('from the second');",
    });
    const store = await open({ url, migrationsDir: dir });
    expect(store.checks().migrations).toBe('ok');
    expect(await applied(url)).toEqual(
      shipped.concat([
        { version: LATEST + 1, name: 'notes' },
        { version: LATEST + 2, name: 'more_notes' },
      ]),
    );
    expect(await sql(url, 'SELECT id FROM notes')).toEqual([{ id: 'from the second' }]);
  });

  it('a migration that fails leaves nothing of itself and stops the store from opening', async () => {
    const url = await createTestDatabase();
    const dir = migrationsWith({ [nextFile('broken')]: 'CREATE TABLE half (id text); SELECT no_such_function();' });
    const err = await openPostgresStore({ url, migrationsDir: dir }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(StoreOpenError);
    expect(err?.message).toMatch(/^PostgreSQL migration \d{3}_broken failed at postgres:\/\/.*: function no_such_function\(\) does not exist$/);
    expect(await applied(url)).toEqual(shipped);
    expect(await sql(url, `SELECT 1 FROM pg_tables WHERE tablename = 'half'`)).toEqual([]);
  });

  it('a migration is recorded in the same transaction that applies it: if recording fails, nothing of it stays', async () => {
    const url = await createTestDatabase();
    // The migration itself succeeds, but records its own version first: recording it afterwards fails.
    const dir = migrationsWith({
      [nextFile('sneaky')]: `CREATE TABLE half (id text); INSERT INTO parley_schema_migrations (version, name) VALUES (${LATEST + 1}, 'sneaky');`,
    });
    await expect(openPostgresStore({ url, migrationsDir: dir })).rejects.toThrow(/^PostgreSQL migration \d{3}_sneaky failed at .*duplicate key/);
    expect(await applied(url)).toEqual(shipped);
    expect(await sql(url, `SELECT 1 FROM pg_tables WHERE tablename = 'half'`)).toEqual([]);
  });

  it('a database newer than this build is refused with a clear message, and an open store reports it', async () => {
    const url = await createTestDatabase();
    const clock = createManualClock(0);
    const running = await open({ url, clock });
    // Another, newer Parley migrates the database further.
    await sql(url, `INSERT INTO parley_schema_migrations (version, name) VALUES ($1, 'from_the_future')`, [LATEST + 1]);
    const err = await openPostgresStore({ url }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(StoreOpenError);
    expect(err?.message).toMatch(new RegExp(` is at schema version ${LATEST + 1}, newer than this build of Parley knows \\(${LATEST}\\): run a newer Parley$`));
    expect(running.checks().migrations).toBe('ok');
    clock.advance(5000); // idle that long: the liveness probe reads the schema version again
    await expect.poll(() => running.checks().migrations, { timeout: 10_000 }).toBe(`data is newer (${LATEST + 1}) than this build (${LATEST})`);
  });

  it('location masks the password; engine names itself', async () => {
    const url = new URL(await createTestDatabase());
    url.password = 'not-checked-with-trust';
    const store = await open({ url: url.toString() });
    expect(store.engine).toBe('postgres');
    expect(store.location).toBe(url.toString().replace(':not-checked-with-trust@', ':****@'));
  });
});
