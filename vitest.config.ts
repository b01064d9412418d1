import { configDefaults, defineConfig } from 'vitest/config';

// Two projects: every test on LMDB (the embedded default), and the suites that run a whole Parley (integration,
// security and crash tests) again on PostgreSQL. Tests named *.lmdb.test.ts are about LMDB itself (its files,
// a full disk under it, its map size) and run only on LMDB; the store contract suite (test/store/) runs each
// contract on both engines by itself.
const WHOLE_PARLEY = ['test/integration/**/*.test.ts', 'test/security/**/*.test.ts'];
// Files there that never run Parley on the run's engine (their own config files through src/main.ts, an LLM client
// alone, a store opened directly): running them again would repeat the same test.
const NO_ENGINE = [
  'test/integration/build.test.ts',
  'test/integration/startup-refusals.test.ts',
  'test/integration/llm.openai.test.ts',
  'test/integration/llm.openai.stream.test.ts',
  'test/integration/proactive.unavailable.test.ts',
  'test/integration/store.pg-connect-error.test.ts',
  // PostgreSQL servers of their own, whatever the run's engine:
  'test/integration/postgres-outage.test.ts',
  'test/integration/jobs.postgres-cluster.test.ts',
  'test/integration/cluster.nodes.test.ts',
  'test/integration/cluster.takeover.test.ts',
  'test/integration/cluster.whatsapp.test.ts',
  'test/integration/cluster.guardrails.test.ts',
  'test/integration/cluster.rolling-restart.test.ts',
  'test/integration/cluster.sdk.test.ts',
  'test/integration/cluster.inbox.test.ts',
  'test/integration/handoff.cluster.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    // The processes a test file started outside its tests die after it (support/child-processes.ts).
    setupFiles: ['test/support/child-processes.setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // A worker keeps its modules from one test file to the next: importing the app again for every file cost ~130 s
    // of the run's CPU. Safe because nothing in src/ keeps module-level state, and tests restore what they mock.
    isolate: false,
    fileParallelism: true,
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: 'lmdb', include: ['test/**/*.test.ts', 'sdk/test/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: WHOLE_PARLEY,
          exclude: [...configDefaults.exclude, '**/*.lmdb.test.ts', ...NO_ENGINE],
          env: { PARLEY_TEST_ENGINE: 'postgres' },
        },
      },
    ],
  },
});
