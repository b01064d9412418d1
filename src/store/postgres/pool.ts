// The store's connection pool, and its opening: every session carries the store's holder name and its timeouts, and
// the first connection brings the schema up to date (one clear line when the server cannot be reached).
import pg from 'pg';
import type { Logger } from '../../logger.ts';
import { StoreOpenError } from '../errors.ts';
import { describePgConnectError } from '../pg-connect-error.ts';
import { connectAtStart } from './connect-at-start.ts';
import { maskedUrl } from './location.ts';
import { migrate, type SqlMigration } from './migrate.ts';
import { unavailability } from './unavailable.ts';

/** What the pool and the opening take of the store's options (store.ts documents each). */
export interface PoolOptions {
  url: string;
  poolSize?: number;
  idleInTransactionTimeoutMs?: number;
  connectTimeoutMs?: number;
  startRetryMs?: number;
}

/** int8 columns (times in ms, sequence numbers, counts) as numbers: every value Parley stores is below 2^53. */
const INT8_OID = 20;

export function createPool(options: PoolOptions, holder: string, statementTimeoutMs: number, log: Logger | undefined): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    statement_timeout: statementTimeoutMs,
    idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs ?? 5000,
    // The server cancels slow statements itself; this catches a server that does not answer at all.
    query_timeout: statementTimeoutMs + 5000,
    // Waiting longer for a connection (a new one, or a free one of the pool) counts as the database not answering.
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    keepAlive: true,
    application_name: holder,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection that breaks (the server restarted, a network cut) is dropped by the pool; it must not crash us.
  pool.on('error', (err) => log?.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'an idle PostgreSQL connection failed'));
  return pool;
}

/** Reaches the server (retrying while it is starting or away, for `startRetryMs`) and migrates; the schema version. */
export async function openAndMigrate(pool: pg.Pool, migrations: SqlMigration[], options: PoolOptions, log: Logger | undefined): Promise<number> {
  const location = maskedUrl(options.url);
  let client: pg.PoolClient;
  try {
    client = await connectAtStart(pool, {
      url: options.url,
      retryMs: options.startRetryMs,
      onRetry: (err) => log?.warn({ location, cause: unavailability(err)?.cause }, 'PostgreSQL is not reachable yet; trying again'),
    });
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  try {
    const version = await migrate(client, migrations, location);
    client.release();
    return version;
  } catch (err) {
    client.release(true);
    await pool.end().catch(() => undefined);
    throw unavailability(err) ? new StoreOpenError(describePgConnectError(err, options.url)) : err;
  }
}
