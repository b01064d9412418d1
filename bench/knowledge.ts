// `npx tsx bench/knowledge.ts`: the knowledge base's retrieval quality and speed, on both engines in one run.
//  1. Quality on test/fixtures/knowledge (40 help articles, 47 questions written for them): recall@5 and MRR at the
//     article level for the engine's keyword search, against a plain baseline in the same run (articles ranked by how
//     many of the question's words they contain). Hybrid search needs an embeddings model; none ships in an npm
//     package here, so keyword alone (the RRF merge is tested with a fake endpoint).
//  2. Ingest throughput: articles/s through the service (chunking + the store's write + its index).
//  3. Search latency at 10,000 chunks: the corpus plus synthetic articles made from its sentences, the questions asked
//     in a loop; p50/p99 per engine (targets: p99 ≤ 20 ms LMDB, ≤ 50 ms PostgreSQL), with the baseline's scan as context.
// KB_CHUNKS (default 10000), KB_QUERIES (default 2000), KB_ENGINES (default "lmdb,postgres").
import { createClock } from '../src/clock.ts';
import { createKnowledge, type ArticleInput, type Knowledge } from '../src/knowledge/service.ts';
import { openLmdbStore } from '../src/store/lmdb/index.ts';
import { openPostgresStore } from '../src/store/postgres/store.ts';
import type { Store } from '../src/store/repos.ts';
import { corpusArticles, corpusQuestions } from '../test/support/knowledge-corpus.ts';
import { tempDir } from '../test/support/tmp.ts';
import { benchPostgres, log, percentile } from './lib.ts';
import type { TestPostgres } from '../test/support/postgres.ts';

const CHUNKS = Number(process.env.KB_CHUNKS ?? 10_000);
const QUERIES = Number(process.env.KB_QUERIES ?? 2000);
const ENGINES = (process.env.KB_ENGINES ?? 'lmdb,postgres').split(',') as ('lmdb' | 'postgres')[];

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

/** Article ids in the order of their best chunk. */
const articleOrder = (hits: { articleId: string }[]) => [...new Set(hits.map((h) => h.articleId))];

/** Synthetic help articles from the corpus' sentences, shuffled deterministically, each with a few unique words. */
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

async function openEngine(engine: 'lmdb' | 'postgres', pgServer: () => Promise<TestPostgres>): Promise<Store> {
  if (engine === 'lmdb') return openLmdbStore({ path: tempDir('parley-kb-bench-'), diskReserveMb: 32 });
  return openPostgresStore({ url: await (await pgServer()).createDatabase() });
}

async function ingest(k: Knowledge, articles: ArticleInput[]) {
  const t0 = performance.now();
  for (const a of articles) await k.upsert(a);
  return articles.length / ((performance.now() - t0) / 1000);
}

async function main() {
  const articles = corpusArticles();
  const questions = corpusQuestions();
  const expected = questions.map((q) => q.article);
  log(`corpus: ${articles.length} articles, ${questions.length} questions (test/fixtures/knowledge)`);

  const base = quality(
    questions.map((q) => baselineRank(articles, q.q)),
    expected,
  );
  log(`baseline (word overlap): recall@5 ${base.recall5.toFixed(3)}, MRR ${base.mrr.toFixed(3)}`);

  let server: TestPostgres | undefined;
  const pgServer = async () => (server ??= await benchPostgres());
  try {
    for (const engine of ENGINES) {
      const store = await openEngine(engine, pgServer);
      try {
        const k = createKnowledge({ store: store.knowledge, clock: createClock() });
        const corpusRate = await ingest(k, articles);
        const rankings: string[][] = [];
        for (const q of questions) rankings.push(articleOrder(await k.search(q.q, { limit: 20 })));
        const kw = quality(rankings, expected);
        log(
          `${engine}: keyword recall@5 ${kw.recall5.toFixed(3)}, MRR ${kw.mrr.toFixed(3)} (baseline ${base.recall5.toFixed(3)} / ${base.mrr.toFixed(3)}); ingest ${corpusRate.toFixed(0)} articles/s (corpus)`,
        );

        const chunksNow = (await store.knowledge.count()).chunks;
        const extra = synthetic(Math.max(0, Math.ceil((CHUNKS - chunksNow) / 5)));
        const bulkRate = await ingest(k, extra);
        const { articles: nArticles, chunks } = await store.knowledge.count();
        log(`${engine}: ${nArticles} articles, ${chunks} chunks; ingest ${bulkRate.toFixed(0)} articles/s (synthetic, 5 chunks each)`);

        for (let i = 0; i < 50; i++) await k.search(questions[i % questions.length].q); // warm-up
        const times: number[] = [];
        const cpu0 = process.cpuUsage();
        for (let i = 0; i < QUERIES; i++) {
          const t0 = performance.now();
          await k.search(questions[i % questions.length].q, { limit: 5 });
          times.push(performance.now() - t0);
        }
        const cpu = process.cpuUsage(cpu0);
        times.sort((a, b) => a - b);
        const big = quality(await Promise.all(questions.map(async (q) => articleOrder(await k.search(q.q, { limit: 20 })))), expected);
        log(
          `${engine}: search at ${chunks} chunks, ${QUERIES} queries: p50 ${percentile(times, 0.5).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms, max ${times[times.length - 1].toFixed(2)} ms; this process's CPU ${((cpu.user + cpu.system) / 1000 / QUERIES).toFixed(2)} ms/query; recall@5 among them ${big.recall5.toFixed(3)}`,
        );
      } finally {
        await store.close();
      }
    }
    // Context: the baseline's scan over as many chunk texts, in memory.
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
  } finally {
    await server?.close();
  }
}

await main();
