// support/child-processes.ts, in a vitest run of its own (test/fixtures/child-processes: the project's pool settings
// and setup file, a 1.5 s test timeout). Its fixture files start `node` sleepers through trackChild and never stop them:
// a test abandoned at its timeout, a beforeAll shared by two tests, a run stopped from outside mid-test. Every sleeper
// must be gone when its test, its file or its run is.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { facts as readFacts, type Fact } from '../fixtures/child-processes/report.ts';
import { CHILDREN_DIR_ENV } from '../support/child-ledger.ts';
import { trackChild } from '../support/child-processes.ts';
import { postgresDataDirsUnder, running, signalPostgres } from '../support/postgres-processes.ts';
import { tempDir } from '../support/tmp.ts';

const CONFIG = join(PROJECT_ROOT, 'test/fixtures/child-processes/vitest.config.ts');
const GLOBAL_SETUP_CONFIG = join(PROJECT_ROOT, 'test/fixtures/child-processes/vitest.global-setup.config.ts');
const VITEST = join(PROJECT_ROOT, 'node_modules/vitest/vitest.mjs');

/** The fixtures' sleeper (not another process that took its pid since, nor a zombie: that one is gone). */
function sleeperRuns(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('setInterval(() => {}, 60_000)');
  } catch {
    return false;
  }
}

async function until(check: () => boolean, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** `vitest run` on the fixture config, in a process group of its own (killed with the test, its workers too). */
function fixtureRun(files: string[], config = CONFIG) {
  const reportPath = join(tempDir(), 'report.jsonl');
  const env: NodeJS.ProcessEnv = { ...process.env, REAPER_REPORT: reportPath, FORCE_COLOR: '0' };
  for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key]; // this worker's, not the run's
  delete env.PARLEY_TEST_SHARED_POSTGRES_URL; // a global setup of its own starts its own
  delete env[CHILDREN_DIR_ENV]; // and lists its own children (without one, none are listed)
  const child = trackChild(
    spawn(process.execPath, [VITEST, 'run', '--config', config, ...files], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }),
    { group: true },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const facts = () => readFacts(reportPath);
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, facts, done, output: () => out };
}

/** Kills the sleepers a broken registry left, so a failure of this test leaves nothing running either. */
function killLeft(pids: number[]) {
  for (const pid of pids) if (sleeperRuns(pid)) process.kill(pid, 'SIGKILL');
}

const started = (facts: Fact[], file: string) => facts.filter((f) => f.file === file && typeof f.started === 'number').map((f) => f.started as number);

describe('the processes a test starts die with it', () => {
  it(
    'a test abandoned at its timeout: its child is killed before the next test; a beforeAll child serves the whole file and dies when the file ends',
    { timeout: 180_000 },
    async () => {
      const run = fixtureRun(['1-timeout.fixture.ts', '2-file-scope.fixture.ts', '3-after-file-scope.fixture.ts']);
      const code = await run.done;
      const facts = run.facts();
      const pids = [...started(facts, 'timeout'), ...started(facts, 'file-scope')];
      try {
        expect(code, run.output()).toBe(1); // the one timeout
        expect(pids, run.output()).toHaveLength(2);
        expect(run.output()).toMatch(/Test timed out in 1500ms/);
        expect(facts.find((f) => f.file === 'timeout' && 'goneBeforeFileEnd' in f)?.goneBeforeFileEnd, run.output()).toBe(true);
        expect(facts.filter((f) => f.file === 'file-scope' && 'aliveInTest' in f).map((f) => f.alive)).toEqual([true, true]);
        expect(facts.find((f) => f.file === 'after-file-scope')?.goneAfterItsFile, run.output()).toBe(true);
        const gone = await until(() => pids.every((pid) => !sleeperRuns(pid)));
        expect(gone, `still running after the run: ${pids.filter(sleeperRuns).join(', ')}`).toBe(true);
      } finally {
        killLeft(pids);
      }
    },
  );

  /** Runs the hanging fixture until its test hangs; resolves with its beforeAll child's pid and its worker's. */
  async function hangingRun() {
    const run = fixtureRun(['abandoned.fixture.ts']);
    const hanging = await until(() => run.facts().some((f) => f.hanging === true) || run.child.exitCode !== null, 120_000);
    const pids = started(run.facts(), 'abandoned');
    const worker = run.facts().find((f) => f.hanging === true)?.worker as number | undefined;
    return { run, hanging: hanging && run.child.exitCode === null, pids, worker };
  }

  it('a run stopped from outside in the middle of a test (SIGTERM to vitest): the children its worker started are killed', { timeout: 180_000 }, async () => {
    const { run, hanging, pids } = await hangingRun();
    try {
      expect(hanging, run.output()).toBe(true);
      expect(pids).toHaveLength(1);
      expect(sleeperRuns(pids[0])).toBe(true);
      process.kill(run.child.pid!, 'SIGTERM'); // vitest's main process alone: it exits, its worker loses it
      await run.done;
      const gone = await until(() => !sleeperRuns(pids[0]));
      expect(gone, `still running after the run was stopped: ${pids[0]}`).toBe(true);
    } finally {
      killLeft(pids);
    }
  });

  it(
    'a worker told to stop in the middle of a test (SIGTERM, as vitest stops its workers): its children are killed, and it still dies of it',
    { timeout: 180_000 },
    async () => {
      const { run, hanging, pids, worker } = await hangingRun();
      try {
        expect(hanging, run.output()).toBe(true);
        expect(pids).toHaveLength(1);
        expect(worker).toBeGreaterThan(0);
        process.kill(worker!, 'SIGTERM');
        expect(await until(() => !running(worker!)), `worker ${worker} still running after SIGTERM`).toBe(true);
        await run.done; // the run ends on its worker's death
        expect(run.output()).toMatch(/Worker exited unexpectedly/);
        const gone = await until(() => !sleeperRuns(pids[0]));
        expect(gone, `still running after its worker was stopped: ${pids[0]}`).toBe(true);
      } finally {
        killLeft(pids);
      }
    },
  );

  it(
    'a run stopped from outside (SIGTERM to vitest, which then skips its global teardown): its PostgreSQL and its directory go',
    { timeout: 180_000 },
    async () => {
      const run = fixtureRun(['shared-postgres.fixture.ts'], GLOBAL_SETUP_CONFIG);
      let postmaster = 0;
      try {
        const hanging = await until(() => run.facts().some((f) => f.hanging === true) || run.child.exitCode !== null, 120_000);
        expect(hanging && run.child.exitCode === null, run.output()).toBe(true);
        const runDir = run.facts().find((f) => f.hanging === true)!.runDir as string;
        const [dataDir] = postgresDataDirsUnder(runDir);
        postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
        expect(running(postmaster)).toBe(true);
        process.kill(run.child.pid!, 'SIGTERM');
        await run.done;
        expect(await until(() => !running(postmaster)), `the run's PostgreSQL (${postmaster}) still running`).toBe(true);
        expect(existsSync(runDir), `${runDir} left behind`).toBe(false);
      } finally {
        if (postmaster && running(postmaster)) signalPostgres(postmaster, 'SIGKILL');
      }
    },
  );

  it('a worker killed outright (SIGKILL) in the middle of a test: the run’s global teardown kills the children it listed', { timeout: 180_000 }, async () => {
    const run = fixtureRun(['killed-worker.fixture.ts'], GLOBAL_SETUP_CONFIG);
    let pids: number[] = [];
    try {
      const hanging = await until(() => run.facts().some((f) => f.hanging === true) || run.child.exitCode !== null, 120_000);
      expect(hanging && run.child.exitCode === null, run.output()).toBe(true);
      pids = started(run.facts(), 'killed-worker');
      const worker = run.facts().find((f) => f.hanging === true)!.worker as number;
      expect(sleeperRuns(pids[0])).toBe(true);
      process.kill(worker, 'SIGKILL');
      await run.done; // the run ends on its worker's death, through its global teardown
      expect(run.output()).toMatch(/Worker exited unexpectedly/);
      const gone = await until(() => !sleeperRuns(pids[0]));
      expect(gone, `still running after the run whose worker was killed: ${pids[0]}`).toBe(true);
      expect(run.output()).toMatch(/processes started by tests were left running/); // and said so
    } finally {
      killLeft(pids);
    }
  });
});
