// describePgConnectError against the errors node-postgres really raises: each one produced by
// connecting to a real PostgreSQL (test/support/postgres.ts) in the wrong way.
import { connect } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describePgConnectError } from '../../src/store/pg-connect-error.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';

const PASSWORD = 'S3cret/p@ss';
const ENCODED = encodeURIComponent(PASSWORD);
let open: TestPostgres; // trust auth; max_connections 5, of which 3 are for superusers
let guarded: TestPostgres; // scram-sha-256 with PASSWORD
let stopped: TestPostgres; // started, then stopped: nothing listens on its port

beforeAll(async () => {
  [open, guarded, stopped] = await Promise.all([startPostgres({ maxConnections: 5 }), startPostgres({ password: PASSWORD }), startPostgres()]);
  await stopped.stop();
  await query(open.url, 'CREATE ROLE app LOGIN');
});
afterAll(async () => {
  await Promise.all([open, guarded, stopped].map((s) => s?.close()));
});

async function query(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** The error pg raises connecting to `url`, described. */
async function described(url: string, o: { connectionTimeoutMillis?: number; pool?: boolean } = {}): Promise<string> {
  const connect = async () => {
    if (o.pool) {
      const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: o.connectionTimeoutMillis });
      try {
        await pool.query('SELECT 1');
      } finally {
        await pool.end();
      }
      return;
    }
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: o.connectionTimeoutMillis ?? 10_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const err = await connect().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err === undefined) throw new Error(`connecting to ${url} succeeded`);
  return describePgConnectError(err, url);
}

describe('describePgConnectError, on real connection failures', () => {
  it('nothing listening on the port', async () => {
    const url = `postgres://parley:${ENCODED}@127.0.0.1:${stopped.port}/parley`;
    expect(await described(url)).toBe(
      `cannot connect to PostgreSQL at postgres://parley:****@127.0.0.1:${stopped.port}/parley: connection refused: nothing is listening on 127.0.0.1:${stopped.port} (is PostgreSQL running, on that port?)`,
    );
  });

  it('nothing listening, by host name', async () => {
    expect(await described(`postgres://parley@localhost:${stopped.port}/parley`)).toBe(
      `cannot connect to PostgreSQL at postgres://parley@localhost:${stopped.port}/parley: connection refused: nothing is listening on localhost:${stopped.port} (is PostgreSQL running, on that port?)`,
    );
  });

  it('nothing listening on a host with both an IPv6 and an IPv4 address (Node fails with an AggregateError)', async () => {
    // pg hands on the socket's error as it is; this machine's localhost has no ::1, so the dual-stack failure is made with net directly.
    const err = await new Promise<Error>((resolve) => {
      const socket = connect({
        host: 'dual.test',
        port: stopped.port,
        autoSelectFamily: true,
        lookup: (_host, _o, cb) =>
          cb(null, [
            { address: '::1', family: 6 },
            { address: '127.0.0.1', family: 4 },
          ]),
      });
      socket.once('error', resolve);
    });
    expect(err).toBeInstanceOf(AggregateError);
    expect(describePgConnectError(err, `postgres://parley@dual.test:${stopped.port}/parley`)).toBe(
      `cannot connect to PostgreSQL at postgres://parley@dual.test:${stopped.port}/parley: connection refused: nothing is listening on dual.test:${stopped.port} (is PostgreSQL running, on that port?)`,
    );
  });

  it('a database that does not exist', async () => {
    const url = `${open.url.replace(/\/postgres$/, '')}/no_such_db`;
    expect(await described(url)).toBe(
      `cannot connect to PostgreSQL at postgres://postgres@127.0.0.1:${open.port}/no_such_db: database "no_such_db" does not exist (create it first, or fix the database name in the URL)`,
    );
  });

  it('a wrong password, masked', async () => {
    const url = `postgres://postgres:not-${ENCODED}@127.0.0.1:${guarded.port}/postgres`;
    const line = await described(url);
    expect(line).toBe(
      `cannot connect to PostgreSQL at postgres://postgres:****@127.0.0.1:${guarded.port}/postgres: password authentication failed for user "postgres" (a wrong password, or no such user)`,
    );
  });

  it('no password where the server asks for one', async () => {
    const url = `postgres://postgres@127.0.0.1:${guarded.port}/postgres`;
    expect(await described(url)).toBe(
      `cannot connect to PostgreSQL at postgres://postgres@127.0.0.1:${guarded.port}/postgres: the server asks for a password and the URL has none`,
    );
  });

  it('a role that does not exist', async () => {
    expect(await described(`postgres://ghost@127.0.0.1:${open.port}/postgres`)).toBe(
      `cannot connect to PostgreSQL at postgres://ghost@127.0.0.1:${open.port}/postgres: the server refused the connection: role "ghost" does not exist`,
    );
  });

  it('a host name that does not resolve', async () => {
    expect(await described(`postgres://parley:${ENCODED}@no-such-host.invalid:5432/parley`)).toMatch(
      /^cannot connect to PostgreSQL at postgres:\/\/parley:\*\*\*\*@no-such-host\.invalid:5432\/parley: host "no-such-host\.invalid" (not found \(DNS\): check the host in the URL|could not be resolved \(DNS lookup failed, try again later\))$/,
    );
  });

  it('a server that hangs: the connection timeout, from a client and from a pool', async () => {
    await guarded.kill('SIGSTOP');
    try {
      const url = guarded.url;
      const expected = `cannot connect to PostgreSQL at postgres://postgres:****@127.0.0.1:${guarded.port}/postgres: no answer from 127.0.0.1:${guarded.port} within the connection timeout (a firewall, a wrong host, or a server that hangs)`;
      expect(await described(url, { connectionTimeoutMillis: 300 })).toBe(expected);
      expect(await described(url, { connectionTimeoutMillis: 300, pool: true })).toBe(expected);
    } finally {
      await guarded.kill('SIGCONT');
    }
  });

  it('no free connection slot', async () => {
    const appUrl = open.url.replace('postgres://postgres@', 'postgres://app@');
    const held = [new pg.Client(appUrl), new pg.Client(appUrl)];
    await Promise.all(held.map((c) => c.connect()));
    try {
      expect(await described(appUrl)).toMatch(
        new RegExp(
          `^cannot connect to PostgreSQL at postgres://app@127\\.0\\.0\\.1:${open.port}/postgres: the server has no free connection slot \\(max_connections\\): remaining connection slots are reserved`,
        ),
      );
    } finally {
      await Promise.all(held.map((c) => c.end()));
    }
  });

  it('a server shutting down', async () => {
    const held = new pg.Client(open.url);
    held.on('error', () => undefined);
    await held.connect();
    const shutdown = open.kill('SIGTERM'); // smart shutdown: waits for the open session, refuses new ones meanwhile
    try {
      const deadline = Date.now() + 10_000;
      let line = await described(open.url);
      while (!line.includes('shutting down') && Date.now() < deadline) line = await described(open.url); // until the postmaster has read its signal
      expect(line).toBe(
        `cannot connect to PostgreSQL at postgres://postgres@127.0.0.1:${open.port}/postgres: the server is not accepting connections now: the database system is shutting down`,
      );
    } finally {
      await held.end();
      await shutdown;
      await open.restart();
    }
  });

  it('SSL asked of a server without it', async () => {
    expect(await described(`${guarded.url}?ssl=true`)).toBe(
      `cannot connect to PostgreSQL at postgres://postgres:****@127.0.0.1:${guarded.port}/postgres: the URL asks for SSL (sslmode) and the server does not support it`,
    );
  });

  it('a unix socket directory with no server in it', async () => {
    const dir = `${stopped.dir}/socket`;
    expect(await described(`postgres://parley@/parley?host=${dir}&port=${stopped.port}`)).toBe(
      `cannot connect to PostgreSQL at postgres://parley@/parley at ${dir} (unix socket), port ${stopped.port}: nothing at the unix socket for port ${stopped.port} in ${dir} (is PostgreSQL running, on that port?)`,
    );
  });
});

describe('describePgConnectError never shows the password', () => {
  it('not in the URL it shows, nor in a message that echoes the URL or the password', () => {
    const url = `postgres://parley:${ENCODED}@db.internal:6543/parley?sslmode=disable`;
    const echoing = [
      new Error(`could not connect with ${url}`),
      new Error(`login as parley/${PASSWORD} refused`),
      { message: `bad ${ENCODED}`, code: 'XX000' },
      'plain string',
    ];
    for (const err of echoing) {
      const line = describePgConnectError(err, url);
      expect(line.startsWith('cannot connect to PostgreSQL at postgres://parley:****@db.internal:6543/parley: ')).toBe(true);
      expect(line).not.toContain(PASSWORD);
      expect(line).not.toContain(ENCODED);
      expect(line).not.toContain('\n');
    }
  });

  it('names the default port and database when the URL leaves them out, and survives a URL it cannot read', () => {
    expect(describePgConnectError(new Error('boom'), 'postgres://parley@db')).toBe('cannot connect to PostgreSQL at postgres://parley@db:5432/parley: boom');
    expect(describePgConnectError(new Error('boom'), 'postgres://[::1]/x')).toBe('cannot connect to PostgreSQL at postgres://[::1]:5432/x: boom');
    expect(describePgConnectError(new Error('Invalid URL'), 'postgres://parley:pw@db:port/x')).toBe(
      'cannot connect to PostgreSQL at the configured URL (not a valid postgres:// URL): Invalid URL',
    );
  });
});
