// The PostgreSQL engine of the store (repos.ts), on node-postgres with a pool.
//
// Transactions run at READ COMMITTED, and checks that must not race take a lock first: `SELECT … FOR UPDATE` on the
// row (customers, magic links) or a transaction-scoped advisory lock on the id (a conversation, a customer identity:
// held even before the row exists). At READ COMMITTED every statement takes a new snapshot, so the reads after a
// lock see everything committed before it was granted, and the check-then-write is exact with no retries. Not
// SERIALIZABLE: conflicts there abort one transaction, which must then be run again, and a callback that has already
// prepared its side of the work (a job scheduled, a reply handed on) cannot simply be re-run. Not REPEATABLE READ:
// its snapshot is taken at the first statement, before the lock is granted, so a read after the lock could miss the
// write the lock was waiting for.
import { createClock, type Clock } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import { StoreUnavailableError } from '../errors.ts';
import type { Store, StoreRepos } from '../repos.ts';
import { postgresConversations } from './conversations.ts';
import { postgresCustomers } from './customers.ts';
import type { Db, Statement } from './db.ts';
import { createPool, openAndMigrate } from './pool.ts';
import { createDatabaseHealth } from './health.ts';
import { postgresHistory } from './history.ts';
import { createListener, parseJobNotice } from './listener.ts';
import { createNoticeSender } from './notices.ts';
import { BUS_CHANNEL, postgresBus } from './bus.ts';
import { postgresInbox } from './inbox.ts';
import { JOBS_CHANNEL, jobLeaseHolder, postgresJobs } from './jobs.ts';
import { postgresLinks } from './links.ts';
import { postgresAgents } from './agents.ts';
import { postgresAgentInbox } from './agent-inbox.ts';
import { postgresNodes } from './nodes.ts';
import { postgresOwnership } from './ownership.ts';
import { maskedUrl } from './location.ts';
import { APPLIED_VERSION, latestVersion, loadMigrations, migrationState } from './migrate.ts';
import { postgresProactive } from './proactive.ts';
import { postgresOutcomes } from './outcomes.ts';
import { postgresTelemetry } from './telemetry.ts';
import { asStoreError, unavailability } from './unavailable.ts';
import { postgresWhatsApp } from './whatsapp.ts';
import { postgresKnowledge } from './knowledge.ts';
import { allRepos, lazyRepos, type RepoFactories } from '../lazy-repos.ts';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:5432/database` */
  url: string;
  poolSize?: number;
  logger?: Logger;
  /** The server cancels a statement running longer than this (a lock wait included): a `timeout` StoreUnavailableError. */
  statementTimeoutMs?: number;
  /**
   * PostgreSQL ends a session of ours that sits in an open transaction longer than this (a process paused by SIGSTOP,
   * a VM frozen, a stalled event loop), so the rows it locked (a conversation's, a job's) are not held from the node
   * that takes over. Default 5 s: below the default statement timeout (10 s), so a statement waiting for such a lock
   * gets it. Parley never waits on anything but its own statements inside a transaction.
   */
  idleInTransactionTimeoutMs?: number;
  /** How long a statement waits for a connection (a new one, or a free one of the pool) before it fails as unavailable. */
  connectTimeoutMs?: number;
  clock?: Clock;
  /**
   * At open, how long to keep trying while the server cannot be reached (refused, starting up, shutting down, full):
   * a Parley started beside its database waits for it. Default 10 s. Wrong credentials or a missing database fail at once.
   */
  startRetryMs?: number;
  /** Tests: another set of migrations (default: ./migrations beside this file). */
  migrationsDir?: string;
  /** The LISTEN connection's first wait before reconnecting (it doubles up to 5 s). */
  listenRetryMs?: number;
}

/** While the database answers: how often a probe checks it (and the schema version) again. */
const LIVENESS_MS = 5000;
/** While it does not: how often a probe tries. */
const PROBE_MS = 1000;

export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const location = maskedUrl(options.url);
  const statementTimeoutMs = options.statementTimeoutMs ?? 10_000;
  const clock = options.clock ?? createClock();
  const log = options.logger?.child({ component: 'store', engine: 'postgres' });
  // Every connection of this store carries its holder name: a job lease it took is live while a session with that
  // name exists (jobs.ts), so a process that died (SIGKILL) leaves no job waiting for its lease to run out.
  const holder = jobLeaseHolder();
  const pool = createPool(options, holder, statementTimeoutMs, log);

  const migrations = loadMigrations(options.migrationsDir);
  let migrationStatus = 'unknown';
  let closed = false;
  const inFlight = new Set<Promise<unknown>>();

  const health = createDatabaseHealth({
    onFailing: (status) => {
      log?.warn({ status }, 'PostgreSQL is unavailable; waiting for it');
      reschedule();
    },
    onRecovered: () => log?.info('PostgreSQL answers again'),
  });

  /** Every statement goes through here: the store's state follows each outcome; unavailability becomes one error type. */
  const run = <T>(work: () => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(new StoreUnavailableError('closed', 'the store is closed'));
    const p = (async () => {
      try {
        const result = await work();
        health.answered();
        return result;
      } catch (err) {
        const u = unavailability(err);
        if (u) health.failed(u);
        else if (typeof (err as { code?: unknown }).code === 'string') health.answered(); // the server answered: an SQL error
        throw asStoreError(err, u);
      }
    })();
    inFlight.add(p);
    const forget = () => inFlight.delete(p);
    p.then(forget, forget);
    return p;
  };

  const statementOf = (s: Statement, values: unknown[]) => (s.name ? { name: s.name, text: s.text, values } : { text: s.text, values });
  // Notices run on the pool like any statement (poolDb is read when a batch is sent, after it exists).
  const notices = createNoticeSender({ run: (s, values) => poolDb.rows(s, values), clock, logger: log });
  const poolDb: Db = {
    rows: (s, values) => run(async () => (await pool.query(statementOf(s, values))).rows),
    announce: (channel, payload) => notices.announce(channel, payload),
  };

  const repoFactories: RepoFactories<Db> = {
    customers: postgresCustomers,
    conversations: (db) => postgresConversations(db, db === poolDb ? inTransaction : undefined),
    history: postgresHistory,
    links: postgresLinks,
    agents: postgresAgents,
    agentInbox: postgresAgentInbox,
    proactive: postgresProactive,
    jobs: (db) => postgresJobs(db, holder),
    whatsapp: postgresWhatsApp,
    outcomes: postgresOutcomes,
    ownership: postgresOwnership,
    inbox: postgresInbox,
  };
  const txRepos = lazyRepos(repoFactories);

  // Liveness and schema: one small query every 5 s, every second while failing. Not only when nothing else has
  // answered for a while: the cluster's heartbeat (src/cluster/membership.ts) answers every second, and the schema
  // version (a database migrated further by a newer Parley) would never be read again.
  let timer: ReturnType<Clock['setTimeout']> | undefined;
  const probe = async () => {
    timer = undefined;
    if (closed) return;
    try {
      const [row] = await poolDb.rows<{ version: number }>({ text: APPLIED_VERSION }, []);
      migrationStatus = migrationState(row.version, latestVersion(migrations));
    } catch {
      /* health has recorded it */
    }
    reschedule();
  };
  function reschedule() {
    if (closed) return;
    clock.clearTimeout(timer);
    timer = clock.setTimeout(() => void probe(), health.failing() ? PROBE_MS : LIVENESS_MS);
  }

  // Open: reach the server (one clear line when it cannot be reached), then bring the schema up to date.
  migrationStatus = migrationState(await openAndMigrate(pool, migrations, options, log), latestVersion(migrations));
  reschedule();

  const listener = createListener({
    url: options.url,
    channels: [JOBS_CHANNEL, BUS_CHANNEL],
    applicationName: holder,
    clock,
    logger: options.logger,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    retryMs: options.listenRetryMs,
  });

  const jobWatchers = new Set<Parameters<Store['watchJobs']>[0]>();
  const store: Store = Object.assign(allRepos(repoFactories, poolDb), {
    // Each pool insert commits on its own: concurrent ones share a statement and a commit (job-insert-batch.ts).
    jobs: postgresJobs(poolDb, holder, { batchInserts: true }),
    engine: 'postgres' as const,
    capabilities: { clustered: true },
    location,
    nodes: postgresNodes(poolDb, holder),
    bus: postgresBus(poolDb, listener, options.logger),
    telemetry: postgresTelemetry(poolDb, {
      onDropped: (records: number, err: unknown) =>
        log?.error({ records, err: { message: (err as Error).message } }, 'telemetry batch refused by PostgreSQL; dropped'),
    }),
    knowledge: postgresKnowledge(poolDb, (fn) => inTransaction((_tx, db) => fn(db))),
    transaction: <T>(fn: (tx: StoreRepos) => Promise<T>) => inTransaction(fn),
    checks: () => (closed ? { database: 'closed', migrations: migrationStatus } : { database: health.status(), migrations: migrationStatus }),
    watchJobs: (watcher: Parameters<Store['watchJobs']>[0]) => {
      // Registered first: the connection the watch opens announces itself to it (a rescan).
      const stopRescans = listener.onListening(() => watcher({ rescan: true }));
      jobWatchers.add(watcher);
      const stopNotices = listener.on(JOBS_CHANNEL, (payload) => {
        const notice = parseJobNotice(payload);
        if (notice) watcher(notice);
      });
      return () => {
        jobWatchers.delete(watcher);
        stopNotices();
        stopRescans();
      };
    },
    setJobNoticeAudience: (othersListening: () => boolean) => notices.setAudience(othersListening),
    rescanJobs: () => {
      for (const w of [...jobWatchers]) w({ rescan: true });
    },
    onRecovered: (listener: () => void) => health.onRecovered(listener),
    flushed: async () => {
      await Promise.allSettled([...inFlight]);
    },
    isEmpty: async () => {
      const [row] = await poolDb.rows<{ empty: boolean }>(
        {
          text: `SELECT NOT (EXISTS (SELECT 1 FROM customers) OR EXISTS (SELECT 1 FROM conversations) OR EXISTS (SELECT 1 FROM job_ids)
           OR EXISTS (SELECT 1 FROM job_dead_letters) OR EXISTS (SELECT 1 FROM telemetry_events) OR EXISTS (SELECT 1 FROM magic_links) OR EXISTS (SELECT 1 FROM agents)) AS empty`,
        },
        [],
      );
      return row.empty;
    },
    close: async () => {
      if (closed) return;
      await notices.close();
      await Promise.allSettled([...inFlight]);
      closed = true;
      clock.clearTimeout(timer);
      await store.bus.close();
      await listener.close();
      await pool.end();
    },
  });

  async function inTransaction<T>(fn: (tx: StoreRepos, db: Db) => Promise<T>): Promise<T> {
    const txClient = await run(() => pool.connect());
    // While checked out the client is ours to watch: a connection that breaks between statements emits 'error'.
    let broken: unknown;
    const onError = (err: Error) => {
      broken = err;
    };
    txClient.on('error', onError);
    let ended = false;
    let failedStatement: unknown;
    const announcements: [channel: string, payload: string][] = [];
    const txDb: Db = {
      rows: (s, values) => {
        if (ended) return Promise.reject(new Error('a statement of a transaction that has ended (use the store, not the `tx` it gave)'));
        return run(async () => (await txClient.query(statementOf(s, values))).rows).catch((err: unknown) => {
          failedStatement ??= err;
          if (unavailability(err)) broken ??= err;
          throw err;
        });
      },
      announce: (channel, payload) => void announcements.push([channel, payload]),
    };
    try {
      await txDb.rows({ text: 'BEGIN ISOLATION LEVEL READ COMMITTED' }, []);
      let result: T;
      try {
        result = await fn(txRepos(txDb), txDb);
      } catch (err) {
        await run(() => txClient.query('ROLLBACK')).catch((rollbackErr: unknown) => {
          broken ??= rollbackErr;
        });
        throw err;
      }
      if (failedStatement !== undefined) {
        // PostgreSQL has aborted the transaction; a COMMIT would quietly roll it back.
        await run(() => txClient.query('ROLLBACK')).catch((rollbackErr: unknown) => {
          broken ??= rollbackErr;
        });
        throw failedStatement;
      }
      const commit = await run(() => txClient.query('COMMIT')).catch((err: unknown) => {
        broken ??= err;
        throw err;
      });
      if (commit.command !== 'COMMIT') throw new Error(`the transaction was rolled back (${commit.command})`);
      for (const [channel, payload] of announcements) notices.announce(channel, payload);
      return result;
    } finally {
      ended = true;
      txClient.off('error', onError);
      // A connection that failed (or may be mid-statement) is closed rather than handed to the next caller.
      txClient.release(broken === undefined ? undefined : (broken as Error));
    }
  }

  return store;
}
