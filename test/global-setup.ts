// Builds the browser bundles before any test runs, so a direct `npx vitest run …`
// never tests a stale public/build/widget.js (esbuild: well under a second).
// Every temporary directory of the run (LMDB stores, configs, browser profiles,
// child processes') goes under one TMPDIR made here and removed at the end, so
// runs leave nothing behind in the system's temp directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildAssets } from '../scripts/build-assets.ts';

export default async function setup() {
  await buildAssets({ log: () => undefined });
  const runDir = mkdtempSync(join(tmpdir(), 'parley-test-run-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = runDir; // test workers and the processes they spawn inherit it
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(runDir, { recursive: true, force: true });
  };
}
