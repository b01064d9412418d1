// The knowledge base as the store keeps it (issue 36): articles, their chunks (split along headings) and a keyword
// index over the chunks that both engines serve — BM25 (typed-array posting lists, an exact top-k search, its state persisted) on LMDB, `tsvector` + GIN on
// PostgreSQL — plus optional embedding vectors stored with the chunks. Kept beside repos.ts, not inside a transaction's
// repositories: nothing else is written together with an article.

export type ArticleFormat = 'markdown' | 'html' | 'text';

export interface KnowledgeArticle {
  id: string;
  title: string;
  url?: string;
  body: string;
  format: ArticleFormat;
  locale?: string;
  tags: string[];
  /** Where it came from: `api`, or `source:<n>` for a synced source (those the sync may remove). */
  origin: string;
  /** The fetched page's validators, for conditional requests. */
  etag?: string;
  lastModified?: string;
  createdAt: number;
  updatedAt: number;
}

export interface KnowledgeChunk {
  /** `<articleId>#<position>` */
  chunkId: string;
  articleId: string;
  /** 0, 1, … in the article's order. */
  position: number;
  /** The headings above the chunk, outermost first (empty: before the first heading). */
  headingPath: string[];
  text: string;
  /** Unit length, when embeddings are configured. */
  embedding?: number[];
}

export interface KnowledgeHit {
  chunkId: string;
  articleId: string;
  title: string;
  url?: string;
  /** The heading path joined with " › ". */
  heading: string;
  text: string;
  score: number;
}

export interface ArticleRef {
  id: string;
  url?: string;
  etag?: string;
  lastModified?: string;
}

export interface KnowledgeSearchOptions {
  /** Only articles in this language (its first subtag: `en-GB` → `en`) and articles without a locale. */
  locale?: string;
  limit: number;
}

/** How the keyword index came to be in this process (LMDB: `loaded` from its persisted state or `rebuilt`). */
export interface KnowledgeIndexInfo {
  kind: 'bm25' | 'postgres';
  state: 'loaded' | 'rebuilt' | 'empty' | 'database';
  chunks: number;
  /** LMDB: how many times the index was rebuilt from the chunks since the store opened. */
  rebuilds: number;
}

export interface KnowledgeStore {
  /** Writes the article and replaces its chunks, in one transaction; the index follows. */
  put(article: KnowledgeArticle, chunks: KnowledgeChunk[]): Promise<void>;
  get(id: string): Promise<KnowledgeArticle | undefined>;
  byUrl(url: string): Promise<KnowledgeArticle | undefined>;
  /** Articles by id, after `after` (the last id of the previous page). */
  list(o: { after?: string; limit: number }): Promise<KnowledgeArticle[]>;
  /** Articles of one origin, for a sync to compare with what it fetched. */
  byOrigin(origin: string): Promise<ArticleRef[]>;
  /** Deletes the article and its chunks; false when it was not there. */
  remove(id: string): Promise<boolean>;
  /** Keyword search, best first; every term is optional (more matching terms rank higher). */
  search(query: string, o: KnowledgeSearchOptions): Promise<KnowledgeHit[]>;
  /** Chunks with an embedding, by cosine similarity to `vector` (unit length), best first. */
  nearest(vector: number[], o: KnowledgeSearchOptions): Promise<KnowledgeHit[]>;
  count(): Promise<{ articles: number; chunks: number }>;
  indexInfo(): KnowledgeIndexInfo;
}

/** `en-GB` → `en`; undefined stays undefined. */
export const languageOf = (locale: string | undefined): string | undefined => (locale ? locale.split(/[-_]/)[0].toLowerCase() || undefined : undefined);

export const chunkIdOf = (articleId: string, position: number) => `${articleId}#${position}`;

export const headingText = (path: string[]) => path.join(' › ');
