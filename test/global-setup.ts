// Builds the browser bundles before any test runs, so a direct `npx vitest run …`
// never tests a stale public/build/widget.js (esbuild: well under a second).
// Every temporary directory of the run (LMDB stores, configs, browser profiles,
// child processes', PostgreSQL clusters) goes under one TMPDIR made here and removed at the end, so
// runs leave nothing behind in the system's temp directory.
// Starts the run's one PostgreSQL server (test/support/shared-postgres.ts gives test files its URL),
// after making sure of the checkout's pristine cluster that every server copies instead of running
// initdb (made once, kept in node_modules/.cache/parley-postgres/: see support/postgres-cluster.ts).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildAssets } from '../scripts/build-assets.ts';
import { findPostgresBin, postgresRunAs } from './support/postgres-binaries.ts';
import { prepareTemplate, templateCacheDir } from './support/postgres-cluster.ts';
import { postgresDataDirsUnder, reapPostgres } from './support/postgres-processes.ts';
import { CHILDREN_DIR_ENV, killListedChildren } from './support/child-ledger.ts';
import { openPostgresStore } from '../src/store/postgres/store.ts';
import { createDatabase, MIGRATED_TEMPLATE, startPostgres, type TestPostgres } from './support/postgres.ts';

async function startSharedPostgres(runDir: string): Promise<TestPostgres> {
  const bin = findPostgresBin();
  const runAs = postgresRunAs();
  const template = templateCacheDir(bin, runAs);
  await prepareTemplate(bin, template, runAs, runDir);
  process.env.PARLEY_PG_TEMPLATE = template; // test workers inherit it
  // Nothing kills the shared server (a test that does starts its own), so its own durability is not under test: fsync
  // off makes every commit of the PostgreSQL project cheap, as tmpfs would.
  return startPostgres({ fsync: false });
}

/** The run's list of the processes its workers started (support/child-ledger.ts). */
const childrenDir = (runDir: string) => join(runDir, 'parley-children');

/** Stops servers a test left running (e.g. a failed test that never reached its close()), then removes the run's directory. */
async function removeRunDir(runDir: string) {
  const left = killListedChildren(childrenDir(runDir)); // a worker killed outright could not
  if (left.length > 0) console.warn(`test teardown: processes started by tests were left running (${left.join(', ')}); killed them`);
  for (const dataDir of postgresDataDirsUnder(runDir)) {
    if (await reapPostgres(dataDir)) console.warn(`test teardown: a PostgreSQL server was left running on ${dataDir}; killed it`);
  }
  rmSync(runDir, { recursive: true, force: true });
}

/**
 * vitest stopped from outside (SIGTERM, or SIGINT to it alone, as `timeout` sends) exits at once, without its global
 * teardown: the run's servers and directory go then, synchronously (reapPostgres signals before its first await).
 * Returns the way to stand down once the teardown has done it.
 */
function reapOnExit(runDir: string): () => void {
  const reap = () => {
    killListedChildren(childrenDir(runDir));
    for (const dataDir of postgresDataDirsUnder(runDir)) void reapPostgres(dataDir);
    rmSync(runDir, { recursive: true, force: true });
  };
  process.once('exit', reap);
  return () => process.off('exit', reap);
}

/** Set while the first setup's run lasts: vitest calls setup once per project (and for the root), and they share it. */
const SHARED_URL = 'PARLEY_TEST_SHARED_POSTGRES_URL';

export default async function setup(project: TestProject) {
  const shared = process.env[SHARED_URL];
  if (shared) {
    project.provide('postgresUrl', shared);
    return () => undefined;
  }
  const runDir = mkdtempSync(join(tmpdir(), 'parley-test-run-'));
  chmodSync(runDir, 0o711); // as root, the postgres user must reach its clusters inside (it cannot list the rest)
  const previous = {
    TMPDIR: process.env.TMPDIR,
    PARLEY_PG_TEMPLATE: process.env.PARLEY_PG_TEMPLATE,
    [SHARED_URL]: process.env[SHARED_URL],
    [CHILDREN_DIR_ENV]: process.env[CHILDREN_DIR_ENV],
  };
  process.env.TMPDIR = runDir; // test workers and the processes they spawn inherit it
  process.env[CHILDREN_DIR_ENV] = childrenDir(runDir);
  const restoreEnv = () => {
    for (const [key, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  const [assets, started] = await Promise.allSettled([buildAssets({ log: () => undefined }), startSharedPostgres(runDir)]);
  if (assets.status === 'rejected' || started.status === 'rejected') {
    restoreEnv();
    if (started.status === 'fulfilled') await started.value.close();
    await removeRunDir(runDir);
    throw assets.status === 'rejected' ? assets.reason : (started as PromiseRejectedResult).reason;
  }
  const postgres = started.value;
  const standDown = reapOnExit(runDir);
  try {
    await openPostgresStore({ url: await createDatabase(postgres.url, MIGRATED_TEMPLATE) }).then((store) => store.close());
  } catch (err) {
    restoreEnv();
    standDown();
    await postgres.close();
    await removeRunDir(runDir);
    throw err;
  }
  project.provide('postgresUrl', postgres.url); // ProvidedContext is declared in support/shared-postgres.ts
  process.env[SHARED_URL] = postgres.url;
  return async () => {
    restoreEnv();
    try {
      await postgres.close();
    } finally {
      await removeRunDir(runDir);
      standDown();
    }
  };
}
