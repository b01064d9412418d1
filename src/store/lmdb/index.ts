// The LMDB engine: the embedded default, one process per data directory. Opening it takes the directory's lock,
// checks the data file, opens the environment, runs the migrations, and starts the disk reserve.
import { mkdirSync } from 'node:fs';
import type { Logger } from '../../logger.ts';
import { StoreOpenError } from '../errors.ts';
import type { Store, StoreRepos } from '../repos.ts';
import { allRepos, lazyRepos, type RepoFactories } from '../lazy-repos.ts';
import { openKv, TABLES, type Kv, type KvScope, type OpenKvOptions } from './kv.ts';
import { latestVersion, migrate, migrations as defaultMigrations, schemaVersion, type Migration } from './migrations.ts';
import { lockDataDirectory } from './process-lock.ts';
import { lmdbConversations } from './repos/conversations.ts';
import { lmdbCustomers } from './repos/customers.ts';
import { lmdbHistory } from './repos/history.ts';
import { createClaimState, createSequences, lmdbJobs, type ClaimState, type Sequences } from './repos/jobs.ts';
import { lmdbLinks } from './repos/links.ts';
import { lmdbAgents } from './repos/agents.ts';
import { lmdbAgentInbox } from './repos/agent-inbox.ts';
import { lmdbProactive } from './repos/proactive.ts';
import { lmdbWhatsApp } from './repos/whatsapp.ts';
import { lmdbInbox } from './repos/inbox.ts';
import { lmdbOutcomes } from './repos/outcomes.ts';
import { createProcessBus } from './bus.ts';
import { createMemoryCluster, type MemoryCluster } from './cluster.ts';
import { lmdbTelemetry } from './telemetry/store.ts';
import { lmdbKnowledge } from './repos/knowledge.ts';

export interface OpenLmdbOptions extends OpenKvOptions {
  migrations?: Migration[];
  logger?: Logger;
}

function repoFactories(kv: Kv, sequences: Sequences, claims: ClaimState, cluster: MemoryCluster, reposOn: (tx: KvScope) => StoreRepos): RepoFactories<KvScope> {
  return {
    customers: lmdbCustomers,
    conversations: (s) => lmdbConversations(s, cluster.ownership.owner, reposOn),
    history: lmdbHistory,
    links: lmdbLinks,
    agents: lmdbAgents,
    agentInbox: lmdbAgentInbox,
    proactive: lmdbProactive,
    jobs: (s) => lmdbJobs(s, kv, sequences, claims),
    whatsapp: lmdbWhatsApp,
    outcomes: lmdbOutcomes,
    ownership: () => cluster.ownership,
    inbox: (s) => lmdbInbox(s, cluster),
  };
}

export async function openLmdbStore(options: OpenLmdbOptions): Promise<Store & { kv: Kv }> {
  mkdirSync(options.path, { recursive: true });
  const lock = await lockDataDirectory(options.path);
  let kv: Kv;
  try {
    kv = openKv(options);
  } catch (err) {
    lock.release();
    throw err;
  }
  const list = options.migrations ?? defaultMigrations;
  const latest = latestVersion(list);
  try {
    const version = schemaVersion(kv);
    if (version > latest) throw new StoreOpenError(`storage at ${options.path} has schema ${version}, newer than this build (${latest})`);
    await kv.startReserve();
    await migrate(kv, list);
  } catch (err) {
    await kv.close().catch(() => undefined);
    lock.release();
    throw err;
  }
  const sequences = createSequences(kv);
  const claims = createClaimState(kv);
  const conversations = lmdbConversations(kv.direct);
  const cluster: MemoryCluster = createMemoryCluster({
    now: Date.now,
    conversation: (id) => conversations.get(id),
    inboxed: async (id) => (await lmdbInbox(kv.direct, cluster).list(id)).length > 0,
  });
  const factories = repoFactories(kv, sequences, claims, cluster, (tx) => txRepos(tx));
  const repos = allRepos(factories, kv.direct);
  const txRepos = lazyRepos(factories);
  const telemetry = lmdbTelemetry(kv, options.logger);
  const bus = createProcessBus();
  const knowledge = lmdbKnowledge(kv, options.logger);
  let closed = false;
  return Object.assign(repos, {
    engine: 'lmdb' as const,
    capabilities: { clustered: false },
    location: options.path,
    kv,
    nodes: cluster.nodes,
    bus,
    telemetry,
    knowledge,
    transaction: <T>(fn: (tx: StoreRepos) => Promise<T>) => kv.transaction((tx) => fn(txRepos(tx))),
    checks() {
      if (closed) return { database: 'closed', migrations: 'unknown' };
      try {
        const v = schemaVersion(kv);
        const migrations = v === latest ? 'ok' : v < latest ? `pending (at ${v}, latest ${latest})` : `data is newer (${v}) than this build (${latest})`;
        return { database: kv.health.status(), migrations };
      } catch (err) {
        return { database: (err as Error).message, migrations: 'unknown' };
      }
    },
    // One process holds the store: its queues wake themselves on their own enqueues, and nobody else stores jobs.
    watchJobs: () => () => undefined,
    rescanJobs: () => undefined,
    setJobNoticeAudience: () => undefined,
    onRecovered: (listener: () => void) => kv.health.onRecovered(listener),
    flushed: () => kv.flushed(),
    isEmpty: async () => TABLES.every((t) => t === 'meta' || t === 'knowledgeIndex' || kv.count(t) === 0),
    async close() {
      if (closed) return;
      closed = true;
      await bus.close();
      await telemetry.stop();
      await knowledge.close();
      await kv.close();
      lock.release();
    },
  });
}
