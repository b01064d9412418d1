// Issue 36, part 5: the LMDB engine's keyword index (src/store/lmdb/knowledge-index.ts over bm25.ts: typed-array
// posting lists, an accumulator and a bounded heap) ranks exactly as BM25 written out plainly does, on random small
// corpora: the same top k with the same scores, after any sequence of replaced and removed articles, after a save and
// a load of its state, within a language. It also ranks as MiniSearch (the library it replaced) did, and a store whose
// saved index is MiniSearch's (written before the upgrade) rebuilds it from the chunks at open.
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { createChunkIndex, processTerm, queryTerms, type IndexedChunk } from '../../src/store/lmdb/knowledge-index.ts';
import { lmdbKv, openTestStore } from '../support/store.ts';
import { tempDir } from '../support/tmp.ts';

const VOCABULARY = (
  'return returns returned refund refunds order ordering orders shipping ship shipped delivery parcel password reset ' +
  'account email invoice payment card wallet store gift size exchange warranty repair jacket boot tent 30 2fa'
).split(' ');
const FILLER = 'the a of to and how is your my we'.split(' ');

function random(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

function corpus(seed: number, articles: number) {
  const rnd = random(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  // a skewed vocabulary: early words are common, late ones rare
  const word = () => (rnd() < 0.15 ? pick(FILLER) : VOCABULARY[Math.floor(rnd() ** 2 * VOCABULARY.length)]);
  const words = (min: number, max: number) => Array.from({ length: min + Math.floor(rnd() * (max - min + 1)) }, word);
  const sentence = (min: number, max: number) => words(min, max).join(rnd() < 0.3 ? ', ' : ' ');
  const lang = () => (rnd() < 0.2 ? 'es' : rnd() < 0.2 ? 'en' : undefined);
  const article = (id: string): IndexedChunk[] => {
    const title = sentence(1, 4);
    const l = lang();
    return Array.from({ length: 1 + Math.floor(rnd() * 4) }, (_, i) => ({
      id: `${id}#${i}`,
      articleId: id,
      ...(l ? { lang: l } : {}),
      title,
      heading: rnd() < 0.3 ? '' : sentence(1, 3),
      text: `${sentence(3, 40)}. ${sentence(0, 20)}`,
    }));
  };
  const query = () => words(1, 5).join(' ') + (rnd() < 0.2 ? ' nothingmatches' : '');
  return { rnd, article, query, articles: Array.from({ length: articles }, (_, i) => article(`a${i}`)) };
}

/** BM25 as the index documents it, computed plainly from the chunks' text for every chunk. */
function bruteForce(chunks: IndexedChunk[], query: string, o: { lang?: string; limit: number }) {
  const fields = ['title', 'heading', 'text'] as const;
  const boosts = [2, 1.5, 1];
  const [k1, b, delta] = [1.2, 0.7, 0.5];
  const analysed = chunks.map((c) =>
    fields.map((f) => {
      const words = c[f].split(/[\n\r\p{Z}\p{P}]+/u);
      return { length: new Set(words).size, terms: words.map(processTerm).filter((t) => t) as string[] };
    }),
  );
  const n = chunks.length;
  const avg = fields.map((_, f) => analysed.reduce((s, a) => s + a[f].length, 0) / n);
  const terms = queryTerms(query);
  const scored = chunks.map((c, i) => {
    let sum = 0;
    const matched = new Set<string>();
    for (const t of terms) {
      fields.forEach((_, f) => {
        const tf = analysed[i][f].terms.filter((x) => x === t).length;
        if (tf === 0) return;
        const df = analysed.filter((a) => a[f].terms.includes(t)).length;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        sum += boosts[f] * idf * (delta + (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * analysed[i][f].length) / avg[f])));
        matched.add(t);
      });
    }
    return { id: c.id, articleId: c.articleId, score: sum * matched.size, lang: c.lang };
  });
  return ranked(scored.filter((s) => s.score > 0 && (!o.lang || s.lang === undefined || s.lang === o.lang))).slice(0, o.limit);
}

/** Best first; scores equal to 12 digits are a tie, broken by chunk id (the index's rule). */
const ranked = <T extends { id: string; score: number }>(xs: T[]) =>
  xs.sort((x, y) => Number(y.score.toPrecision(12)) - Number(x.score.toPrecision(12)) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));

function expectSame(got: { id: string; score: number }[], want: { id: string; score: number }[]) {
  expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
  got.forEach((h, i) => expect(Math.abs(h.score - want[i].score)).toBeLessThanOrEqual(1e-9 * want[i].score));
}

describe('the LMDB knowledge index (BM25, exact top k)', () => {
  it('agrees with a brute-force BM25 on random small corpora, for any limit and language', () => {
    let compared = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const c = corpus(seed, 5 + (seed % 25));
      const index = createChunkIndex();
      for (const a of c.articles) index.replace(a[0].articleId, a);
      const all = c.articles.flat();
      for (let q = 0; q < 15; q++) {
        const query = c.query();
        const o = { limit: 1 + Math.floor(c.rnd() * 12), lang: c.rnd() < 0.3 ? 'es' : undefined };
        const want = bruteForce(all, query, o);
        expectSame(index.search(query, o), want);
        compared += want.length;
      }
    }
    expect(compared).toBeGreaterThan(2000);
  });

  it('after articles are replaced and removed at random, ranks as an index built afresh from what is left', () => {
    for (let seed = 100; seed < 120; seed++) {
      const c = corpus(seed, 20);
      const index = createChunkIndex();
      const live = new Map<string, IndexedChunk[]>();
      for (const a of c.articles) {
        index.replace(a[0].articleId, a);
        live.set(a[0].articleId, a);
      }
      for (let step = 0; step < 60; step++) {
        const id = `a${Math.floor(c.rnd() * 26)}`;
        if (c.rnd() < 0.35) {
          index.remove(id);
          live.delete(id);
        } else {
          const a = c.article(id);
          index.replace(id, a);
          live.set(id, a);
        }
      }
      const all = [...live.values()].flat();
      expect(index.size()).toBe(all.length);
      for (let q = 0; q < 10; q++) {
        const query = c.query();
        expectSame(index.search(query, { limit: 8 }), bruteForce(all, query, { limit: 8 }));
      }
    }
  });

  it('a saved state loads into an index that ranks the same; a state of another format is refused', () => {
    const c = corpus(7, 30);
    const index = createChunkIndex();
    for (const a of c.articles) index.replace(a[0].articleId, a);
    index.remove('a3');
    const loaded = createChunkIndex(structuredClone(index.toState()));
    expect(loaded.size()).toBe(index.size());
    for (let q = 0; q < 30; q++) {
      const query = c.query();
      const o = { limit: 6, lang: q % 2 ? 'en' : undefined };
      expect(loaded.search(query, o)).toEqual(index.search(query, o));
    }
    // the article still replaces and removes after the load
    loaded.remove('a4');
    expect(loaded.search(c.articles[4][0].title, { limit: 50 }).map((h) => h.articleId)).not.toContain('a4');
    expect(() => createChunkIndex({ documentCount: 1, index: [] } as never)).toThrow();
    expect(() => createChunkIndex({ ...index.toState(), chunks: [{ id: 'x#0', articleId: 'x', lengths: [1, 1, 1], postings: [99_999, 0, 1] }] })).toThrow();
  });

  it('ranks as MiniSearch did with the options it had (the library this index replaced)', () => {
    for (let seed = 200; seed < 215; seed++) {
      const c = corpus(seed, 25);
      const index = createChunkIndex();
      const mini = new MiniSearch<IndexedChunk>({
        fields: ['title', 'heading', 'text'],
        storeFields: ['articleId', 'lang'],
        processTerm,
        searchOptions: { boost: { title: 2, heading: 1.5 }, combineWith: 'OR', processTerm },
      });
      for (const a of c.articles) {
        index.replace(a[0].articleId, a);
        mini.addAll(a);
      }
      for (let q = 0; q < 15; q++) {
        const query = c.query();
        const want = ranked(mini.search(query).map((r) => ({ id: String(r.id), score: r.score }))).slice(0, 5);
        expectSame(index.search(query, { limit: 5 }), want);
      }
    }
  });

  it('a store saved with the MiniSearch index of before rebuilds its index from the chunks at open, and finds the articles', async () => {
    const path = tempDir('parley-kb-upgrade-');
    const first = await openTestStore(path);
    const article = { id: 'hold', title: 'Holding packages', body: '', format: 'markdown' as const, tags: [], origin: 'api', createdAt: 1, updatedAt: 1 };
    await first.knowledge.put(article, [
      { chunkId: 'hold#0', articleId: 'hold', position: 0, headingPath: ['apt-mark'], text: 'apt-mark hold keeps a package back' },
    ]);
    await first.close();
    // what the MiniSearch index saved (its toJSON shape), at the articles' generation
    const again = await openTestStore(path);
    const kv = lmdbKv(again);
    // the saved state came back through LMDB's own encoding and answers
    expect(again.knowledge.indexInfo()).toMatchObject({ state: 'loaded', chunks: 1, rebuilds: 0 });
    expect((await again.knowledge.search('hold a package back', { limit: 5 })).map((h) => h.chunkId)).toEqual(['hold#0']);
    const generation = kv.get<number>('knowledgeIndex', 'generation');
    const miniState = {
      documentCount: 1,
      nextId: 1,
      documentIds: { 0: 'hold#0' },
      fieldIds: { title: 0 },
      fieldLength: {},
      averageFieldLength: [1],
      storedFields: {},
      dirtCount: 0,
      index: [],
      serializationVersion: 2,
    };
    await kv.direct.put('knowledgeIndex', 'state', { generation, state: miniState });
    await again.close();
    const upgraded = await openTestStore(path);
    try {
      expect(upgraded.knowledge.indexInfo()).toMatchObject({ kind: 'bm25', state: 'rebuilt', chunks: 1, rebuilds: 1 });
      expect((await upgraded.knowledge.search('how do I hold a package', { limit: 5 })).map((h) => h.chunkId)).toEqual(['hold#0']);
    } finally {
      await upgraded.close();
    }
  });
});
