// Bundles the browser code (widget, dashboard) with esbuild into public/build
// and copies the static pages. Prints each bundle's size, raw and gzipped.
import { copyFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface BundleEntry {
  entry: string;
  out: string;
  /** Gzipped size budget in bytes; exceeding it is reported. */
  budgetGzip?: number;
}

export const BUNDLES: BundleEntry[] = [
  { entry: 'widget/src/index.ts', out: 'widget.js', budgetGzip: 25 * 1024 },
  { entry: 'dashboard/src/index.ts', out: 'dashboard.js' },
  { entry: 'inbox/src/index.ts', out: 'inbox.js', budgetGzip: 20 * 1024 },
];

export const PAGES: { from: string; to: string }[] = [
  { from: 'widget/demo.html', to: 'demo.html' },
  { from: 'dashboard/telemetry.html', to: 'telemetry.html' },
  { from: 'inbox/inbox.html', to: 'inbox.html' },
];

function atomicWrite(file: string, content: Buffer) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, file);
}

export async function buildAssets(o: { outDir?: string; log?: (line: string) => void } = {}) {
  const outDir = o.outDir ?? join(ROOT, 'public', 'build');
  const log = o.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  mkdirSync(outDir, { recursive: true });
  const sizes: { file: string; raw: number; gzip: number; brotli: number }[] = [];
  for (const b of BUNDLES) {
    const entry = join(ROOT, b.entry);
    if (!existsSync(entry)) continue;
    const outfile = join(outDir, b.out);
    const result = await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      minify: true,
      format: 'iife',
      target: 'es2019',
      platform: 'browser',
      legalComments: 'none',
      loader: { '.css': 'text' },
      logLevel: 'warning',
      write: false,
    });
    // Written to a temp file and renamed: a server or a test reading the bundle meanwhile never sees half of it.
    const content = Buffer.from(result.outputFiles[0].contents);
    // The bundle first, then its compressed copies: the server serves a copy only when it is not older than the
    // bundle, so a rebuild in progress never serves an old copy of a new bundle.
    const gzipped = gzipSync(content, { level: 9 });
    const brotli = brotliCompressSync(content, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: content.length } });
    atomicWrite(outfile, content);
    atomicWrite(`${outfile}.gz`, gzipped);
    atomicWrite(`${outfile}.br`, brotli);
    const gzip = gzipped.length;
    sizes.push({ file: b.out, raw: content.length, gzip, brotli: brotli.length });
    const over = b.budgetGzip && gzip > b.budgetGzip ? `  OVER BUDGET (${(b.budgetGzip / 1024).toFixed(0)} KB)` : '';
    log(
      `  ${b.out.padEnd(14)} ${(content.length / 1024).toFixed(1).padStart(7)} KB raw ${(gzip / 1024).toFixed(1).padStart(6)} KB gzip ${(brotli.length / 1024).toFixed(1).padStart(6)} KB brotli${over}`,
    );
  }
  for (const p of PAGES) {
    const from = join(ROOT, p.from);
    if (!existsSync(from)) continue;
    const tmp = `${join(outDir, p.to)}.${process.pid}.tmp`;
    copyFileSync(from, tmp);
    renameSync(tmp, join(outDir, p.to));
  }
  return sizes;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write('building browser assets → public/build\n');
  await buildAssets();
}
