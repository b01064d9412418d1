// The knowledge base as the features see it: articles in (upsert by id or url, chunked along headings, embedded when
// an embeddings endpoint is configured), and search out — keyword ranks from the store, merged with vector ranks by
// reciprocal rank fusion when there are embeddings. `KnowledgeSearch` is the port the reply path uses.
import { createHash, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { headingText, type ArticleFormat, type KnowledgeArticle, type KnowledgeChunk, type KnowledgeHit, type KnowledgeStore } from '../store/knowledge.ts';
import { chunkArticle } from './chunking.ts';
import type { Embedder } from './embeddings.ts';

export interface KnowledgeSearch {
  search(query: string, o?: { locale?: string; limit?: number }): Promise<KnowledgeHit[]>;
  isEmpty(): Promise<boolean>;
}

export interface ArticleInput {
  id?: string;
  title: string;
  url?: string;
  body: string;
  format: ArticleFormat;
  locale?: string;
  tags?: string[];
}

export interface UpsertMeta {
  origin?: string;
  etag?: string;
  lastModified?: string;
}

export interface Knowledge extends KnowledgeSearch {
  upsert(input: ArticleInput, meta?: UpsertMeta): Promise<{ article: KnowledgeArticle; created: boolean; chunks: number }>;
  get(id: string): Promise<KnowledgeArticle | undefined>;
  list(o: { after?: string; limit: number }): Promise<KnowledgeArticle[]>;
  remove(id: string): Promise<boolean>;
  /** Called after this node added, changed or removed an article. */
  onChange(listener: () => void): () => void;
  store: KnowledgeStore;
}

/** Reciprocal rank fusion's constant (Cormack et al.): 60. */
export const RRF_K = 60;
const DEFAULT_LIMIT = 5;

/** An article without an id: named after its URL (the same page always gets the same id), else at random. */
export const idForUrl = (url: string) => `u-${createHash('sha256').update(url).digest('hex').slice(0, 20)}`;

/** Merges ranked lists: each hit scores Σ 1 / (RRF_K + rank) over the lists it is in (rank from 1). */
export function fuse(lists: KnowledgeHit[][], limit: number): KnowledgeHit[] {
  const merged = new Map<string, KnowledgeHit>();
  for (const list of lists) {
    list.forEach((hit, i) => {
      const known = merged.get(hit.chunkId);
      const add = 1 / (RRF_K + i + 1);
      if (known) known.score += add;
      else merged.set(hit.chunkId, Object.assign({}, hit, { score: add }));
    });
  }
  return [...merged.values()].sort((a, b) => b.score - a.score).slice(0, limit);
}

export function createKnowledge(o: { store: KnowledgeStore; clock: Clock; embedder?: Embedder; logger?: Logger }): Knowledge {
  const { store, clock, embedder } = o;
  const log = o.logger?.child({ component: 'knowledge' });
  const listeners = new Set<() => void>();
  const changed = () => listeners.forEach((l) => l());

  const embedChunks = async (title: string, chunks: KnowledgeChunk[]) => {
    if (!embedder || chunks.length === 0) return;
    try {
      const vectors = await embedder.embed(chunks.map((c) => [title, headingText(c.headingPath), c.text].filter(Boolean).join('\n')));
      chunks.forEach((c, i) => (c.embedding = vectors[i]));
    } catch (err) {
      // Keyword search still finds the article; its vectors come with its next update.
      log?.warn({ err: { message: (err as Error).message } }, 'embedding an article failed; stored without vectors');
    }
  };

  const resolveId = async (input: ArticleInput): Promise<{ id: string; previous?: KnowledgeArticle }> => {
    if (input.id) return { id: input.id, previous: await store.get(input.id) };
    if (input.url) {
      const previous = await store.byUrl(input.url);
      return previous ? { id: previous.id, previous } : { id: idForUrl(input.url) };
    }
    return { id: randomUUID() };
  };

  return {
    store,
    async upsert(input, meta = {}) {
      const { id, previous } = await resolveId(input);
      const now = clock.now();
      const article: KnowledgeArticle = {
        id,
        title: input.title,
        body: input.body,
        format: input.format,
        tags: input.tags ?? [],
        origin: meta.origin ?? previous?.origin ?? 'api',
        createdAt: previous?.createdAt ?? now,
        updatedAt: now,
      };
      if (input.url !== undefined) article.url = input.url;
      if (input.locale !== undefined) article.locale = input.locale;
      if (meta.etag !== undefined) article.etag = meta.etag;
      if (meta.lastModified !== undefined) article.lastModified = meta.lastModified;
      let chunks = chunkArticle(id, input.body, input.format);
      if (chunks.length === 0) chunks = [{ chunkId: `${id}#0`, articleId: id, position: 0, headingPath: [], text: input.title }];
      await embedChunks(input.title, chunks);
      await store.put(article, chunks);
      changed();
      return { article, created: !previous, chunks: chunks.length };
    },
    get: (id) => store.get(id),
    list: (q) => store.list(q),
    async remove(id) {
      const removed = await store.remove(id);
      if (removed) changed();
      return removed;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    async search(query, q = {}) {
      const limit = q.limit ?? DEFAULT_LIMIT;
      if (!query.trim()) return [];
      if (!embedder) return store.search(query, { locale: q.locale, limit });
      const wide = Math.max(20, limit * 4);
      const keyword = await store.search(query, { locale: q.locale, limit: wide });
      let semantic: KnowledgeHit[];
      try {
        const [vector] = await embedder.embed([query]);
        semantic = await store.nearest(vector, { locale: q.locale, limit: wide });
      } catch (err) {
        log?.warn({ err: { message: (err as Error).message } }, 'embedding a query failed; keyword results only');
        return keyword.slice(0, limit);
      }
      return fuse([keyword, semantic], limit);
    },
    isEmpty: async () => (await store.count()).articles === 0,
  };
}
