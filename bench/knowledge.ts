// `npx tsx bench/knowledge.ts`: the knowledge base's retrieval quality and speed, on both engines in one run.
//  1. Quality on two corpora, each imported into a fresh store through the service (`createKnowledge`):
//     - `debian`: a real, public help corpus, the Debian GNU/Linux FAQ (Debian's `debian-faq` package, read from
//       /usr/share/doc/debian/FAQ at run time: see bench/debian-faq.ts for where it comes from and its licence), 118
//       articles, with 47 questions written for it (bench/fixtures/debian-faq-questions.json);
//     - `shop`: test/fixtures/knowledge (40 help articles of a fictional shop written for the project, 47 questions).
//     recall@5 and MRR at the article level for the engine's keyword search, against a plain baseline in the same run
//     (articles ranked by how many of the question's words they contain) and MiniSearch with the options the LMDB index
//     had before its own top-k BM25 (same chunks, in memory: the rankings should not move). Hybrid search needs an embeddings model;
//     none ships in a package here, so keyword alone (the RRF merge is tested with a fake endpoint).
//  2. Ingest throughput: articles/s through the service (chunking + the store's write + its index).
//  3. Search latency at 10,000 chunks: the shop corpus plus synthetic articles made from its sentences, the questions
//     asked in a loop, one at a time; wall p50/p99 and the CPU each search costs (`process.cpuUsage()` around each
//     one: load-independent; on PostgreSQL also the server's CPU per search), with the load average (targets: p99
//     ≤ 20 ms LMDB, ≤ 50 ms PostgreSQL).
// KB_CHUNKS (default 10000), KB_QUERIES (default 2000), KB_ENGINES (default "lmdb,postgres"), KB_CORPORA (default
// "debian,shop"; without the `debian-faq` package installed the bench stops and prints the command to install it).
import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import MiniSearch from 'minisearch';
import { chunkArticle } from '../src/knowledge/chunking.ts';
import { createClock } from '../src/clock.ts';
import { createKnowledge, type ArticleInput, type Knowledge } from '../src/knowledge/service.ts';
import { headingText } from '../src/store/knowledge.ts';
import { openLmdbStore } from '../src/store/lmdb/index.ts';
import { processTerm } from '../src/store/lmdb/knowledge-index.ts';
import { openPostgresStore } from '../src/store/postgres/store.ts';
import type { Store } from '../src/store/repos.ts';
import { corpusArticles, corpusQuestions } from '../test/support/knowledge-corpus.ts';
import { tempDir } from '../test/support/tmp.ts';
import { DEBIAN_FAQ_INSTALL, DEBIAN_FAQ_TEXT, debianFaqArticles, debianFaqInstalled } from './debian-faq.ts';
import { benchPostgres, log, percentile, postgresCpuMs } from './lib.ts';
import type { TestPostgres } from '../test/support/postgres.ts';

const CHUNKS = Number(process.env.KB_CHUNKS ?? 10_000);
const QUERIES = Number(process.env.KB_QUERIES ?? 2000);
const ENGINES = (process.env.KB_ENGINES ?? 'lmdb,postgres').split(',') as ('lmdb' | 'postgres')[];
const CORPORA = (process.env.KB_CORPORA ?? 'debian,shop').split(',');

interface Corpus {
  name: string;
  articles: ArticleInput[];
  questions: { q: string; article: string }[];
}

function corpora(): Corpus[] {
  const out: Corpus[] = [];
  if (CORPORA.includes('debian')) {
    if (!debianFaqInstalled()) {
      log(`the Debian FAQ corpus is not installed (${DEBIAN_FAQ_TEXT} is missing); install it with:\n\n    ${DEBIAN_FAQ_INSTALL}\n`);
      log('(or run without it: KB_CORPORA=shop npx tsx bench/knowledge.ts)');
      process.exit(1);
    }
    const questions = (JSON.parse(readFileSync(new URL('./fixtures/debian-faq-questions.json', import.meta.url), 'utf8')) as Pick<Corpus, 'questions'>)
      .questions;
    out.push({ name: 'debian', articles: debianFaqArticles(), questions });
  }
  if (CORPORA.includes('shop')) out.push({ name: 'shop', articles: corpusArticles(), questions: corpusQuestions() });
  for (const c of out) {
    const ids = new Set(c.articles.map((a) => a.id));
    const unknown = c.questions.filter((q) => !ids.has(q.article));
    if (unknown.length) throw new Error(`${c.name}: questions name articles the corpus lacks: ${unknown.map((q) => q.article).join(', ')}`);
  }
  return out;
}

const STOP = new Set(
  'a an and are as at be but by can do does for from how i if in is it me my of on or so the to was we what when where which why will with you your'.split(' '),
);
const words = (s: string) =>
  s
    .toLowerCase()
    .match(/[a-z0-9]+/g)
    ?.filter((w) => !STOP.has(w)) ?? [];

/** The plain baseline: articles ranked by how many distinct question words their text contains (ties: file order). */
function baselineRank(articles: ArticleInput[], q: string): string[] {
  const terms = [...new Set(words(q))];
  return articles
    .map((a, i) => {
      const have = new Set(words(`${a.title} ${a.body}`));
      return { id: a.id!, i, score: terms.filter((t) => have.has(t)).length };
    })
    .filter((x) => x.score > 0)
    .sort((x, y) => y.score - x.score || x.i - y.i)
    .map((x) => x.id);
}

function quality(rankings: string[][], expected: string[]) {
  let hits = 0;
  let rr = 0;
  rankings.forEach((ranked, i) => {
    const at = ranked.indexOf(expected[i]);
    if (at >= 0 && at < 5) hits++;
    if (at >= 0) rr += 1 / (at + 1);
  });
  return { recall5: hits / rankings.length, mrr: rr / rankings.length };
}
const fmt = (q: { recall5: number; mrr: number }) => `recall@5 ${q.recall5.toFixed(3)}, MRR ${q.mrr.toFixed(3)}`;

/** Article ids in the order of their best chunk. */
const articleOrder = (hits: { articleId: string }[]) => [...new Set(hits.map((h) => h.articleId))];

/** Synthetic help articles from the shop corpus' sentences, shuffled deterministically, each with a few unique words. */
function synthetic(n: number): ArticleInput[] {
  const sentences = corpusArticles().flatMap((a) => a.body.split(/(?<=[.!?])\s+|\n+/).filter((s) => s.length > 20 && !s.startsWith('#')));
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = () => sentences[Math.floor(rnd() * sentences.length)];
  return Array.from({ length: n }, (_, i) => {
    const sections = Array.from({ length: 5 }, (_, s) => `## Section ${s} topic${i}x${s}\n\n${pick()} ${pick()} ${pick()} Reference code zq${i}k${s}.`);
    return {
      id: `syn-${i}`,
      title: `Synthetic article ${i}: ${pick().slice(0, 40)}`,
      body: `# Synthetic ${i}\n\n${sections.join('\n\n')}`,
      format: 'markdown' as const,
    };
  });
}

/** The LMDB index before this one (MiniSearch 7 with the options it had), in memory over the same chunks: to compare. */
function miniSearchOf(articles: ArticleInput[]) {
  const mini = new MiniSearch<{ id: string; articleId: string; title: string; heading: string; text: string }>({
    fields: ['title', 'heading', 'text'],
    storeFields: ['articleId'],
    processTerm,
    searchOptions: { boost: { title: 2, heading: 1.5 }, combineWith: 'OR', processTerm },
  });
  for (const a of articles) {
    const chunks = chunkArticle(a.id!, a.body, a.format);
    mini.addAll(chunks.map((ch) => ({ id: ch.chunkId, articleId: a.id!, title: a.title, heading: headingText(ch.headingPath), text: ch.text })));
  }
  return mini;
}

function miniSearchQuality(c: Corpus) {
  const mini = miniSearchOf(c.articles);
  return quality(
    c.questions.map((q) => articleOrder(mini.search(q.q).slice(0, 20) as unknown as { articleId: string }[])),
    c.questions.map((q) => q.article),
  );
}

async function openEngine(engine: 'lmdb' | 'postgres', pgServer: () => Promise<TestPostgres>): Promise<Store> {
  if (engine === 'lmdb') return openLmdbStore({ path: tempDir('parley-kb-bench-'), diskReserveMb: 32 });
  return openPostgresStore({ url: await (await pgServer()).createDatabase() });
}

async function ingest(k: Knowledge, articles: ArticleInput[]) {
  const t0 = performance.now();
  for (const a of articles) await k.upsert(a);
  return articles.length / ((performance.now() - t0) / 1000);
}

const rank = async (k: Knowledge, c: Corpus) => {
  const rankings: string[][] = [];
  for (const q of c.questions) rankings.push(articleOrder(await k.search(q.q, { limit: 20 })));
  return quality(
    rankings,
    c.questions.map((q) => q.article),
  );
};

/** One corpus on a fresh store of the engine: its quality and the ingest rate. */
async function measureQuality(engine: 'lmdb' | 'postgres', c: Corpus, pgServer: () => Promise<TestPostgres>) {
  const store = await openEngine(engine, pgServer);
  try {
    const k = createKnowledge({ store: store.knowledge, clock: createClock() });
    const rate = await ingest(k, c.articles);
    const { chunks } = await store.knowledge.count();
    const kw = await rank(k, c);
    log(`${engine} ${c.name} (${c.articles.length} articles, ${chunks} chunks): keyword ${fmt(kw)}; ingest ${rate.toFixed(0)} articles/s`);
  } finally {
    await store.close();
  }
}

/** The shop corpus brought to CHUNKS chunks, then QUERIES searches one at a time: wall and CPU per search. */
async function measureSpeed(engine: 'lmdb' | 'postgres', pgServer: () => Promise<TestPostgres>) {
  const store = await openEngine(engine, pgServer);
  const shop: Corpus = { name: 'shop', articles: corpusArticles(), questions: corpusQuestions() };
  const questions = shop.questions;
  try {
    const k = createKnowledge({ store: store.knowledge, clock: createClock() });
    await ingest(k, shop.articles);
    const chunksNow = (await store.knowledge.count()).chunks;
    const bulkRate = await ingest(k, synthetic(Math.max(0, Math.ceil((CHUNKS - chunksNow) / 5))));
    const { articles: nArticles, chunks } = await store.knowledge.count();
    log(`${engine}: ${nArticles} articles, ${chunks} chunks; ingest ${bulkRate.toFixed(0)} articles/s (synthetic, 5 chunks each)`);

    for (let i = 0; i < 50; i++) await k.search(questions[i % questions.length].q); // warm-up
    const [times, cpus] = [[] as number[], [] as number[]];
    const server = engine === 'postgres' ? await pgServer() : undefined;
    const [load0, pg0, cpu0] = [loadavg()[0], server ? postgresCpuMs(server) : 0, process.cpuUsage()];
    for (let i = 0; i < QUERIES; i++) {
      const [c0, t0] = [process.cpuUsage(), performance.now()];
      await k.search(questions[i % questions.length].q, { limit: 5 });
      times.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpus.push((c.user + c.system) / 1000);
    }
    const cpu = process.cpuUsage(cpu0);
    const pgMs = server ? (postgresCpuMs(server) - pg0) / QUERIES : undefined;
    const ms = (xs: number[], p: number) => percentile(xs, p).toFixed(2);
    times.sort((a, b) => a - b);
    cpus.sort((a, b) => a - b);
    const big = await rank(k, shop);
    log(
      `${engine}: search at ${chunks} chunks, ${QUERIES} queries: wall p50 ${ms(times, 0.5)} ms, p99 ${ms(times, 0.99)} ms, max ${times[times.length - 1].toFixed(2)} ms; ` +
        `this process's CPU per search p50 ${ms(cpus, 0.5)} ms, p99 ${ms(cpus, 0.99)} ms, mean ${((cpu.user + cpu.system) / 1000 / QUERIES).toFixed(2)} ms` +
        `${pgMs === undefined ? '' : `; PostgreSQL's CPU per search ${pgMs.toFixed(2)} ms (mean)`}; load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}; ` +
        `shop questions among them: ${fmt(big)}`,
    );
  } finally {
    await store.close();
  }
}

/** Context: MiniSearch (the LMDB index before) over the same chunks, in memory, searched as the loop above does. */
function miniSearchSpeed(questions: { q: string }[]) {
  const shop = corpusArticles();
  const shopChunks = shop.reduce((n, a) => n + chunkArticle(a.id, a.body, a.format).length, 0);
  const articles = [...shop, ...synthetic(Math.max(0, Math.ceil((CHUNKS - shopChunks) / 5)))];
  const mini = miniSearchOf(articles);
  const [times, cpus] = [[] as number[], [] as number[]];
  for (let i = 0; i < Math.min(QUERIES, 500); i++) {
    const [c0, t0] = [process.cpuUsage(), performance.now()];
    mini.search(questions[i % questions.length].q).slice(0, 5);
    times.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1000);
  }
  times.sort((a, b) => a - b);
  cpus.sort((a, b) => a - b);
  const ms = (xs: number[], p: number) => percentile(xs, p).toFixed(2);
  log(
    `context: MiniSearch (the LMDB index before) over the same ${mini.documentCount} chunks in memory, ${times.length} queries: wall p50 ${ms(times, 0.5)} ms, p99 ${ms(times, 0.99)} ms; ` +
      `CPU per search p50 ${ms(cpus, 0.5)} ms, p99 ${ms(cpus, 0.99)} ms; load average ${loadavg()[0].toFixed(1)}`,
  );
}

/** Context: the baseline's scan over as many chunk texts, in memory (the machine's state, in the same minutes). */
function baselineScan(questions: { q: string }[]) {
  const texts = synthetic(Math.ceil(CHUNKS / 5)).flatMap((a) => a.body.split('## ').map((s) => new Set(words(s))));
  const scan: number[] = [];
  for (let i = 0; i < 200; i++) {
    const terms = words(questions[i % questions.length].q);
    const t0 = performance.now();
    texts.map((t) => terms.filter((w) => t.has(w)).length).reduce((m, x) => Math.max(m, x), 0);
    scan.push(performance.now() - t0);
  }
  scan.sort((a, b) => a - b);
  log(
    `context: baseline word-overlap scan over ${texts.length} chunk word sets in memory: p50 ${percentile(scan, 0.5).toFixed(2)} ms, p99 ${percentile(scan, 0.99).toFixed(2)} ms`,
  );
}

async function main() {
  const all = corpora();
  log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const c of all) {
    const base = quality(
      c.questions.map((q) => baselineRank(c.articles, q.q)),
      c.questions.map((q) => q.article),
    );
    log(
      `${c.name}: ${c.articles.length} articles, ${c.questions.length} questions; baseline (word overlap) ${fmt(base)}; MiniSearch (the index before) ${fmt(miniSearchQuality(c))}`,
    );
  }
  let server: TestPostgres | undefined;
  const pgServer = async () => (server ??= await benchPostgres());
  try {
    for (const engine of ENGINES) {
      for (const c of all) await measureQuality(engine, c, pgServer);
      if (CHUNKS > 0) await measureSpeed(engine, pgServer);
    }
    if (CHUNKS > 0 && ENGINES.includes('lmdb')) miniSearchSpeed(corpusQuestions());
    baselineScan(corpusQuestions());
  } finally {
    await server?.close();
  }
}

await main();
