// `parley knowledge import <folder>`: every .md, .html and .txt file under the folder (and .pdf, through pdfjs-dist)
// sent to a running Parley's POST /api/v1/knowledge/articles, the file's path (without its extension) as its id, so
// importing the folder again updates the same articles.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { storableText } from '../http/storable-text.ts';
import { htmlToSections } from './html.ts';
import { ArticleInputSchema, UpsertAnswerSchema, type ArticleInputWire } from './schema.ts';

export class ImportError extends Error {}

const FORMATS: Record<string, ArticleInputWire['format'] | 'pdf'> = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.html': 'html',
  '.htm': 'html',
  '.txt': 'text',
  '.pdf': 'pdf',
};

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (FORMATS[extname(name).toLowerCase()]) yield path;
  }
}

/** `guides/Returns Policy.md` → `guides/returns-policy`, within the id pattern of the API. */
export const idForPath = (rel: string) =>
  rel
    .replace(/\.[^.]+$/, '')
    .replace(/[\\/]+/g, ':')
    .replace(/[^A-Za-z0-9._:-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .toLowerCase()
    .slice(0, 128) || 'article';

const fileTitle = (rel: string) =>
  rel
    .replace(/^.*[\\/]/, '')
    .replace(/\.[^.]+$/, '')
    .replace(/[-_]+/g, ' ');

async function pdfText(path: string): Promise<string> {
  const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const fonts = join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts/');
  const doc = await getDocument({ data: new Uint8Array(readFileSync(path)), standardFontDataUrl: fonts, isEvalSupported: false, verbosity: 0 }).promise;
  const pages: string[] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const content = await (await doc.getPage(n)).getTextContent();
    pages.push(content.items.map((i) => ('str' in i ? i.str + (i.hasEOL ? '\n' : ' ') : '')).join(''));
  }
  await doc.destroy();
  return pages.join('\n\n');
}

/** The folder's files as articles (validated by the API's own schema). */
export async function collectArticles(folder: string, o: { locale?: string } = {}): Promise<ArticleInputWire[]> {
  const out: ArticleInputWire[] = [];
  for (const path of files(folder)) {
    const rel = relative(folder, path);
    const kind = FORMATS[extname(path).toLowerCase()];
    // A document's NUL (a PDF's text, a file's stray byte) is kept as U+FFFD: no store keeps U+0000 (storable-text.ts).
    const body = storableText(kind === 'pdf' ? await pdfText(path) : readFileSync(path, 'utf8'));
    const format = kind === 'pdf' ? 'text' : kind;
    const title =
      (format === 'markdown'
        ? /^#\s+(.+)$/m.exec(body)?.[1]?.trim()
        : format === 'html'
          ? htmlToSections(body).title
          : body
              .split('\n')
              .find((l) => l.trim())
              ?.trim()
              .slice(0, 200)) || fileTitle(rel);
    const article: ArticleInputWire = { id: idForPath(rel), title, body, format };
    if (o.locale) article.locale = o.locale;
    out.push(ArticleInputSchema.parse(article));
  }
  return out;
}

/** `profile`: the address and secret of the configured Parley, used when neither the options nor the environment give them. */
export async function importFolder(
  args: string[],
  o: { write: (line: string) => void; env?: NodeJS.ProcessEnv; profile?: () => { url?: string; secret?: string } },
) {
  const env = o.env ?? process.env;
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { url: { type: 'string' }, secret: { type: 'string' }, locale: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new ImportError((err as Error).message);
  }
  const [command, folder] = parsed.positionals;
  if (command !== 'import' || !folder || parsed.positionals.length !== 2)
    throw new ImportError('usage: parley knowledge import <folder> [--url http://127.0.0.1:3000] [--secret …] [--locale en]');
  const profile = o.profile?.() ?? {};
  // An empty option or variable counts as not given.
  const base = (parsed.values.url || env.PARLEY_URL || profile.url || 'http://127.0.0.1:3000').replace(/\/+$/, '');
  // The profile's secret goes to the profile's own Parley only, never to another address.
  const secret = parsed.values.secret || env.SERVICE_SDK_SECRET || (base === profile.url ? profile.secret : undefined);
  if (!secret) throw new ImportError("the service secret is needed: --secret or SERVICE_SDK_SECRET (the profile's storage.path holds no generated one)");
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new ImportError(`${folder}: no such folder (give the folder of your help articles)`);
  const articles = await collectArticles(folder, { locale: parsed.values.locale });
  let created = 0;
  let updated = 0;
  for (const article of articles) {
    const res = await request(`${base}/api/v1/knowledge/articles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify(article),
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
    const answer: unknown = await res.body.json().catch(() => undefined);
    if (res.statusCode >= 300) {
      const message = (answer as { error?: { message?: string } } | undefined)?.error?.message ?? `HTTP ${res.statusCode}`;
      throw new ImportError(`${article.id}: ${message}`);
    }
    const r = UpsertAnswerSchema.parse(answer);
    if (r.created) created++;
    else updated++;
    o.write(`knowledge import: ${r.created ? 'created' : 'updated'} ${r.id} (${r.chunks} chunks)`);
  }
  o.write(`knowledge import: done: ${articles.length} files, ${created} created, ${updated} updated`);
  return { created, updated };
}
