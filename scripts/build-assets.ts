// Bundles the browser code (widget, dashboard) with esbuild into public/build
// and copies the static pages. Prints each bundle's size, raw and gzipped.
// The widget's languages but English become files of their own (widget-locale-<lang>.json), from the same tables.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { LOCALE_TABLES } from '../widget/src/locale-tables.ts';

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

/** Gzipped size budget of each widget language file. */
export const LOCALE_BUDGET_GZIP = 3 * 1024;
export const localeFile = (lang: string) => `widget-locale-${lang}.json`;

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

/**
 * Writes `content` and its gzip and brotli copies; returns the sizes. The file first, then its compressed copies: the
 * server serves a copy only when it is not older than the file, so a rebuild in progress never serves an old copy of a
 * new file. Each is written to a temp file and renamed: a server or a test reading it meanwhile never sees half of it.
 */
function writeWithCopies(file: string, content: Buffer) {
  const gzipped = gzipSync(content, { level: 9 });
  const brotli = brotliCompressSync(content, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: content.length } });
  atomicWrite(file, content);
  atomicWrite(`${file}.gz`, gzipped);
  atomicWrite(`${file}.br`, brotli);
  return { raw: content.length, gzip: gzipped.length, brotli: brotli.length };
}

const sizeLine = (file: string, size: { raw: number; gzip: number; brotli: number }, budget?: number) => {
  const over = budget && size.gzip > budget ? `  OVER BUDGET (${(budget / 1024).toFixed(0)} KB)` : '';
  const kb = (n: number, w: number) => (n / 1024).toFixed(1).padStart(w);
  return `  ${file.padEnd(22)} ${kb(size.raw, 7)} KB raw ${kb(size.gzip, 6)} KB gzip ${kb(size.brotli, 6)} KB brotli${over}`;
};

/** Each language's table but English as JSON; returns each file's content hash (the widget asks for `?v=<hash>`). */
function writeLocales(outDir: string, log: (line: string) => void) {
  const versions: Record<string, string> = {};
  const sizes: { file: string; raw: number; gzip: number; brotli: number }[] = [];
  for (const [lang, table] of Object.entries(LOCALE_TABLES)) {
    if (lang === 'en') continue;
    const content = Buffer.from(JSON.stringify(table));
    versions[lang] = createHash('sha256').update(content).digest('hex').slice(0, 12);
    const size = writeWithCopies(join(outDir, localeFile(lang)), content);
    sizes.push({ file: localeFile(lang), ...size });
    log(sizeLine(localeFile(lang), size, LOCALE_BUDGET_GZIP));
  }
  return { versions, sizes };
}

export async function buildAssets(o: { outDir?: string; log?: (line: string) => void } = {}) {
  const outDir = o.outDir ?? join(ROOT, 'public', 'build');
  const log = o.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  mkdirSync(outDir, { recursive: true });
  const sizes: { file: string; raw: number; gzip: number; brotli: number }[] = [];
  const locales = writeLocales(outDir, log);
  sizes.push(...locales.sizes);
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
      define: { __PARLEY_LOCALE_VERSIONS__: JSON.stringify(locales.versions) },
    });
    const size = writeWithCopies(outfile, Buffer.from(result.outputFiles[0].contents));
    sizes.push({ file: b.out, ...size });
    log(sizeLine(b.out, size, b.budgetGzip));
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
