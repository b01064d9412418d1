// The production build: the browser bundles (public/build, precompressed) and the server as one ES module,
// dist/main.js, run with plain `node` (no tsx in production). Our own code (src/, machines/, sdk/src/, the demo
// backend) is bundled; every npm package stays external and is loaded from node_modules, so native ones (lmdb,
// msgpackr-extract) and pino's worker-thread transports keep working. The PostgreSQL migrations are copied beside it
// (dist/migrations). Prints each output's size.
import { cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildAssets } from './build-assets.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');

export async function buildServer(log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) {
  rmSync(DIST, { recursive: true, force: true });
  await build({
    entryPoints: [join(ROOT, 'src/main.ts')],
    outfile: join(DIST, 'main.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    packages: 'external',
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
  });
  // The PostgreSQL migrations are read at run time from a `migrations` directory beside the module that loads them
  // (src/store/postgres/migrate.ts): in the bundle, that module is dist/main.js.
  cpSync(join(ROOT, 'src/store/postgres/migrations'), join(DIST, 'migrations'), { recursive: true });
  log(`  dist/main.js   ${(statSync(join(DIST, 'main.js')).size / 1024).toFixed(1).padStart(7)} KB (+ main.js.map)`);
  log(`  dist/migrations/ ${readdirSync(join(DIST, 'migrations')).length} PostgreSQL migrations`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write('building browser assets → public/build\n');
  await buildAssets();
  process.stdout.write('building the server → dist\n');
  await buildServer();
  process.stdout.write('run it with: node --enable-source-maps dist/main.js  (or npm run start:prod)\n');
}
