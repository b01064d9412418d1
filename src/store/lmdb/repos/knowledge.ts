// The knowledge base on LMDB: `knowledgeArticles` id → article, `knowledgeUrls` url → id, `knowledgeChunks`
// [articleId, position] → chunk, `knowledgeIndex` the generation of the articles ('generation') and the keyword
// index's saved state ('state'). The index lives in memory (knowledge-index.ts); its state is saved a moment after
// the last change and at close, and loaded at open when its generation is the articles' own.
import type { Logger } from '../../../logger.ts';
import {
  headingText,
  languageOf,
  type KnowledgeArticle,
  type KnowledgeChunk,
  type KnowledgeHit,
  type KnowledgeIndexInfo,
  type KnowledgeStore,
} from '../../knowledge.ts';
import { createChunkIndex, type ChunkIndex, type ChunkIndexState, type IndexedChunk } from '../knowledge-index.ts';
import type { Kv, KvScope } from '../kv.ts';

type StoredChunk = KnowledgeChunk & { lang?: string };
interface SavedIndex {
  generation: number;
  state: ChunkIndexState;
}

/** How long after the last change the index's state is saved (a burst of imports saves it once). */
const SAVE_DELAY_MS = 1000;
const END = '\uffff';

const chunksOf = (s: KvScope, articleId: string) => [...s.range<StoredChunk>('knowledgeChunks', { start: [articleId, -1], end: [articleId, END] })];

const indexed = (a: KnowledgeArticle, c: StoredChunk): IndexedChunk => ({
  id: c.chunkId,
  articleId: a.id,
  lang: c.lang,
  title: a.title,
  heading: headingText(c.headingPath),
  text: c.text,
});

export interface LmdbKnowledge extends KnowledgeStore {
  /** Saves the index's state if it changed since it was last saved. */
  close(): Promise<void>;
}

export function lmdbKnowledge(kv: Kv, logger?: Logger): LmdbKnowledge {
  const log = logger?.child({ component: 'knowledge-index' });
  let generation = kv.get<number>('knowledgeIndex', 'generation') ?? 0;
  let rebuilds = 0;
  let state: KnowledgeIndexInfo['state'] = 'empty';
  const index: ChunkIndex = open();
  let savedGeneration = (state as KnowledgeIndexInfo['state']) === 'loaded' ? generation : -1;
  let timer: NodeJS.Timeout | undefined;

  function rebuild(): ChunkIndex {
    const fresh = createChunkIndex();
    for (const { value: article } of kv.range<KnowledgeArticle>('knowledgeArticles')) {
      fresh.replace(
        article.id,
        chunksOf(kv.direct, article.id).map(({ value }) => indexed(article, value)),
      );
    }
    rebuilds++;
    return fresh;
  }

  function open(): ChunkIndex {
    if (generation === 0) return createChunkIndex();
    const saved = kv.get<SavedIndex>('knowledgeIndex', 'state');
    if (saved && saved.generation === generation) {
      try {
        const loaded = createChunkIndex(saved.state);
        state = 'loaded';
        return loaded;
      } catch (err) {
        log?.warn({ err }, 'the saved knowledge index could not be read; rebuilding it');
      }
    }
    state = 'rebuilt';
    return rebuild();
  }

  const save = async () => {
    timer = undefined;
    if (savedGeneration === generation) return;
    const at = generation;
    await kv.direct.put('knowledgeIndex', 'state', { generation: at, state: index.toState() } satisfies SavedIndex);
    savedGeneration = at;
  };
  const scheduleSave = () => {
    if (timer) return;
    timer = setTimeout(() => void save().catch((err: unknown) => log?.warn({ err }, 'saving the knowledge index failed')), SAVE_DELAY_MS);
    timer.unref();
  };

  const removeIn = async (tx: KvScope, article: KnowledgeArticle) => {
    for (const { key } of chunksOf(tx, article.id)) await tx.remove('knowledgeChunks', key);
    if (article.url && tx.get<string>('knowledgeUrls', article.url) === article.id) await tx.remove('knowledgeUrls', article.url);
    await tx.remove('knowledgeArticles', article.id);
  };

  const hit = (c: StoredChunk, score: number): KnowledgeHit | undefined => {
    const a = kv.get<KnowledgeArticle>('knowledgeArticles', c.articleId);
    if (!a) return undefined;
    const h: KnowledgeHit = { chunkId: c.chunkId, articleId: a.id, title: a.title, heading: headingText(c.headingPath), text: c.text, score };
    if (a.url !== undefined) h.url = a.url;
    return h;
  };

  return {
    async put(article, chunks) {
      const lang = languageOf(article.locale);
      const stored: StoredChunk[] = chunks.map((c) => (lang ? Object.assign({}, c, { lang }) : c));
      const next = await kv.transaction(async (tx) => {
        const previous = tx.get<KnowledgeArticle>('knowledgeArticles', article.id);
        if (previous) await removeIn(tx, previous);
        await tx.put('knowledgeArticles', article.id, article);
        if (article.url) await tx.put('knowledgeUrls', article.url, article.id);
        for (const c of stored) await tx.put('knowledgeChunks', [article.id, c.position], c);
        const g = (tx.get<number>('knowledgeIndex', 'generation') ?? 0) + 1;
        await tx.put('knowledgeIndex', 'generation', g);
        return g;
      });
      index.replace(
        article.id,
        stored.map((c) => indexed(article, c)),
      );
      generation = Math.max(generation, next);
      scheduleSave();
    },
    get: async (id) => kv.get<KnowledgeArticle>('knowledgeArticles', id),
    byUrl: async (url) => {
      const id = kv.get<string>('knowledgeUrls', url);
      return id === undefined ? undefined : kv.get<KnowledgeArticle>('knowledgeArticles', id);
    },
    list: async ({ after, limit }) => {
      const out: KnowledgeArticle[] = [];
      for (const { key, value } of kv.range<KnowledgeArticle>('knowledgeArticles', { start: after })) {
        if (after !== undefined && key === after) continue;
        out.push(value);
        if (out.length >= limit) break;
      }
      return out;
    },
    byOrigin: async (origin) =>
      [...kv.range<KnowledgeArticle>('knowledgeArticles')]
        .filter(({ value }) => value.origin === origin)
        .map(({ value: a }) => ({ id: a.id, url: a.url, etag: a.etag, lastModified: a.lastModified })),
    async remove(id) {
      const next = await kv.transaction(async (tx) => {
        const previous = tx.get<KnowledgeArticle>('knowledgeArticles', id);
        if (!previous) return undefined;
        await removeIn(tx, previous);
        const g = (tx.get<number>('knowledgeIndex', 'generation') ?? 0) + 1;
        await tx.put('knowledgeIndex', 'generation', g);
        return g;
      });
      if (next === undefined) return false;
      index.remove(id);
      generation = Math.max(generation, next);
      scheduleSave();
      return true;
    },
    search: async (query, o) => {
      const hits: KnowledgeHit[] = [];
      for (const r of index.search(query, { lang: languageOf(o.locale), limit: o.limit })) {
        const [articleId, position] = [r.articleId, Number(r.id.slice(r.id.lastIndexOf('#') + 1))];
        const c = kv.get<StoredChunk>('knowledgeChunks', [articleId, position]);
        const h = c && hit(c, r.score);
        if (h) hits.push(h);
      }
      return hits;
    },
    nearest: async (vector, o) => {
      const lang = languageOf(o.locale);
      const scored: { c: StoredChunk; score: number }[] = [];
      for (const { value: c } of kv.range<StoredChunk>('knowledgeChunks')) {
        if (!c.embedding || (lang && c.lang !== undefined && c.lang !== lang) || c.embedding.length !== vector.length) continue;
        let dot = 0;
        for (let i = 0; i < vector.length; i++) dot += vector[i] * c.embedding[i];
        scored.push({ c, score: dot });
      }
      scored.sort((a, b) => b.score - a.score);
      return scored
        .slice(0, o.limit)
        .map(({ c, score }) => hit(c, score))
        .filter((h): h is KnowledgeHit => h !== undefined);
    },
    count: async () => ({ articles: kv.count('knowledgeArticles'), chunks: kv.count('knowledgeChunks') }),
    indexInfo: () => ({ kind: 'bm25', state, chunks: index.size(), rebuilds }),
    async close() {
      if (timer) clearTimeout(timer);
      await save().catch((err: unknown) => log?.warn({ err }, 'saving the knowledge index failed'));
    },
  };
}
