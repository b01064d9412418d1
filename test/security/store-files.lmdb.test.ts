// Issue 15 parts 2 and 3, with real processes: one Parley per data directory (a second one refuses to start and
// names the holder, and the holder keeps working), and a damaged data file stops start-up with one clear line
// instead of SIGBUS or SIGSEGV.
import { spawn } from 'node:child_process';
import { openSync, closeSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { trackChild } from '../support/child-processes.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { spawnParley, tempDir, testConfig, TEST_SECRET } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';
import { currentLmdbMeta, LMDB_PAGE, lmdbPagesInUse, wholeLength } from '../support/lmdb-meta.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Starts Parley on `storagePath` and waits for it to exit; resolves with its exit code, signal and output. */
function startExpectingExit(storagePath: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  const configPath = join(tempDir(), 'config.yaml');
  writeFileSync(configPath, stringify(testConfig({}, storagePath)));
  const child = trackChild(
    spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'src/main.ts')], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, SERVICE_CONFIG: configPath, SERVICE_SDK_SECRET: TEST_SECRET },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  cleanups.push(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  // A process that started after all is stopped at once: the test then fails on its signal, not on a timeout.
  child.stderr.on('data', () => /Parley is running at/.test(output) && child.kill('SIGKILL'));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, output })));
}

/** A real store with data in it: a Parley that answered widget turns for `customers` customers, stopped cleanly. */
async function storeWithData(customers = 1, storagePath = tempDir()): Promise<string> {
  const p = await spawnParley({ storagePath });
  await Promise.all(
    Array.from({ length: customers }, async (_, c) => {
      const w = await startWidgetSession(p.url, { customerId: `files-${c}`, email: `files-${c}@example.com` });
      for (let i = 0; i < 5; i++) {
        w.send({ type: 'message', id: `m${i}`, text: `What is the status of order ${1000 + i}? ${'Some detail. '.repeat(c % 2 === 0 ? 250 : 10)}` });
        await w.next((f) => f.type === 'message' && f.role === 'assistant');
      }
      w.close();
    }),
  );
  expect(await p.kill('SIGTERM')).toBe(0);
  return storagePath;
}

/** Overwrites `count` pages from page `first` with bytes that are not a page. */
function overwritePages(file: string, first: number, count: number): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(count * LMDB_PAGE, 0x5a), 0, count * LMDB_PAGE, first * LMDB_PAGE);
  closeSync(fd);
}

describe('one process per data directory', () => {
  it('a second process on the same directory exits at start with one line naming the holder; the first keeps answering', async () => {
    const storagePath = tempDir();
    const first = await spawnParley({ storagePath });
    cleanups.push(() => first.kill());
    const second = await startExpectingExit(storagePath);
    expect(second.code).toBe(1);
    const lines = second.output.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`in use by another Parley process \\(pid ${first.child.pid}\\b`));
    const w = await startWidgetSession(first.url, { customerId: 'lock-1', email: 'lock-1@example.com' });
    cleanups.push(() => w.close());
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'ack');
    // After the holder dies (even by SIGKILL), the directory is free again at once.
    await first.kill('SIGKILL');
    const third = await spawnParley({ storagePath });
    cleanups.push(() => third.kill());
    expect((await fetch(`${third.url}/ready`)).status).toBe(200);
  }, 60_000);
});

describe('a damaged data file', () => {
  it('truncated: one clear line naming the file and what to do, a non-zero exit, no signal', async () => {
    const storagePath = await storeWithData();
    const file = join(storagePath, 'data.mdb');
    // Half the file, and at least the main root page: a cut that only drops free pages is a store LMDB opens.
    truncateSync(file, Math.min(Math.floor(statSync(file).size / 2), Number(currentLmdbMeta(file).mainRoot) * LMDB_PAGE));
    const r = await startExpectingExit(storagePath);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.output.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`${file} is truncated .*restore the directory from a backup`))]);
  }, 60_000);

  it('first pages overwritten: one clear line, a non-zero exit, no signal', async () => {
    const storagePath = await storeWithData();
    const file = join(storagePath, 'data.mdb');
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(8192, 0x5a), 0, 8192, 0);
    closeSync(fd);
    const r = await startExpectingExit(storagePath);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.output.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`${file} is not a readable LMDB data file .*restore`))]);
  }, 60_000);
});

describe('a damaged store is refused at start, whatever its size (issue 34 part 5)', () => {
  it('pages in use overwritten in the middle of a whole-length store: one clear line naming the page, exit 1, no signal', async () => {
    const storagePath = await storeWithData(16);
    const file = join(storagePath, 'data.mdb');
    // Whole length (the check before issue 34 walked the pages only when the file was shorter than its last page): a
    // file LMDB left a few unwritten free pages short is padded up to its last page, as LMDB's next writes would.
    wholeLength(file);
    const filePages = statSync(file).size / LMDB_PAGE;
    expect(BigInt(filePages)).toBeGreaterThanOrEqual(currentLmdbMeta(file).lastPage + 1n);
    expect(filePages).toBeGreaterThan(100);
    const middle = lmdbPagesInUse(file).tree.filter((p) => p >= filePages / 4 && p <= (3 * filePages) / 4);
    expect(middle.length).toBeGreaterThan(0);
    overwritePages(file, middle[0], 1);
    overwritePages(file, middle[middle.length - 1], 1);
    const r = await startExpectingExit(storagePath);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.output.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^parley: cannot start: ${file} is damaged \\(.*page \\d+, in use, does not carry its own page number: it was overwritten\\): restore the directory from a backup`,
        ),
      ),
    ]);
  }, 120_000);

  it('an empty data.mdb next to the files of an earlier run: one line saying the data is gone and what to do, exit 1', async () => {
    const storagePath = await storeWithData();
    truncateSync(join(storagePath, 'data.mdb'), 0);
    const r = await startExpectingExit(storagePath);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.output.trim().split('\n')).toEqual([
      expect.stringMatching(
        /data\.mdb is empty \(0 bytes\), but .* holds files of an earlier run \(lock\.mdb\).*Restore the directory from a backup, or move it away/,
      ),
    ]);
  }, 120_000);

  it('a healthy store written by many turns still starts, and keeps what it held', async () => {
    const storagePath = await storeWithData(16);
    const p = await spawnParley({ storagePath });
    cleanups.push(() => p.kill());
    expect((await fetch(`${p.url}/ready`)).status).toBe(200);
    const w = await startWidgetSession(p.url, { customerId: 'files-3', email: 'files-3@example.com' });
    cleanups.push(() => w.close());
    const ready = w.frames.find((f) => f.type === 'ready')!;
    expect(ready.history.filter((e: { role: string }) => e.role === 'user')).toHaveLength(5);
    w.send({ type: 'message', id: 'after', text: 'still there?' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', 20_000);
  }, 120_000);
});
