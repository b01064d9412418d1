// Issue 34 part 7: a PostgreSQL role without the rights to create Parley's tables stops start-up with one line that
// names the role, the database and the grant to run, through the real entry point (src/main.ts) against a real
// PostgreSQL of the test's own; running that grant lets the same Parley start.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackChild } from '../support/child-processes.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { tempDir } from '../support/tmp.ts';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
  await sql(server.url, 'CREATE ROLE app LOGIN');
}, 90_000);
afterAll(async () => {
  await server?.close();
});

async function sql(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

/** `url` as role `role` (trust authentication: no password). */
const asRole = (url: string, role: string) => Object.assign(new URL(url), { username: role }).toString();

/** Runs `npm start`'s entry point on PostgreSQL at `url`; a process that starts is stopped (SIGTERM) at once. */
function start(url: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: string[]; started: boolean }> {
  const dir = tempDir();
  const profile = join(dir, 'profile.yaml');
  writeFileSync(
    profile,
    `server:\n  port: 0\ndemo:\n  backend: false\nlogging:\n  level: silent\nstorage:\n  engine: postgres\n  url: ${url}\n  path: ${dir}/data\n`,
  );
  const child = trackChild(
    spawn(process.execPath, ['--import', pathToFileURL(join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href, join(PROJECT_ROOT, 'src/main.ts')], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SERVICE_CONFIG: profile, SERVICE_SDK_SECRET: 'a-good-long-secret-0123' },
    }),
  );
  let stderr = '';
  let started = false;
  child.stderr.on('data', (d) => {
    stderr += d;
    if (!started && /Parley is running at/.test(stderr)) {
      started = true;
      child.kill('SIGTERM');
    }
  });
  return new Promise((resolve) =>
    child.on('exit', (code, signal) =>
      resolve({
        code,
        signal,
        started,
        lines: stderr
          .trim()
          .split('\n')
          .filter((l) => l.trim() !== ''),
      }),
    ),
  );
}

describe('a PostgreSQL role without rights at start-up', () => {
  it('no CREATE on schema public: one line naming the role, the database and the grant; after that grant it starts', async () => {
    const db = await server.createDatabase('no_create');
    await sql(db, 'REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    const r = await start(asRole(db, 'app'));
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      'parley: cannot start: PostgreSQL role "app" may not create Parley\'s tables in schema public of database "no_create" ' +
        '(permission denied for schema public): as the database owner or a superuser, run in "no_create": GRANT USAGE, CREATE ON SCHEMA public TO app;',
    ]);
    await sql(db, 'GRANT USAGE, CREATE ON SCHEMA public TO app');
    const after = await start(asRole(db, 'app'));
    expect(after.started, after.lines.join('\n')).toBe(true);
  }, 120_000);

  it('no USAGE on any schema of the search path ("no schema has been selected to create in"): the same kind of line; the grant fixes it', async () => {
    const db = await server.createDatabase('no_usage');
    await sql(db, 'REVOKE ALL ON SCHEMA public FROM PUBLIC');
    const r = await start(asRole(db, 'app'));
    expect(r.code).toBe(1);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(
      /^parley: cannot start: PostgreSQL role "app" may use no schema to create Parley's tables in, in database "no_usage" \(no schema has been selected to create in; search_path: "\$user", public\): as the database owner or a superuser, run in "no_usage": GRANT USAGE, CREATE ON SCHEMA public TO app;$/,
    );
    await sql(db, 'GRANT USAGE, CREATE ON SCHEMA public TO app');
    expect((await start(asRole(db, 'app'))).started).toBe(true);
  }, 120_000);

  it('no CONNECT on the database: one line naming the grant', async () => {
    const db = await server.createDatabase('no_connect');
    await sql(db, 'REVOKE CONNECT ON DATABASE no_connect FROM PUBLIC');
    const r = await start(asRole(db, 'app'));
    expect(r.code).toBe(1);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(
      /permission denied for database "?no_connect"?: as a superuser or the database owner, run: GRANT CONNECT ON DATABASE no_connect TO app;/,
    );
  }, 120_000);
});
