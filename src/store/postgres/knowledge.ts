// The knowledge base on PostgreSQL (migration 010): articles, and chunks with a `tsvector` in the article's language
// under a GIN index, so every node searches the same index. A query runs `websearch_to_tsquery` in each language it
// may meet, its terms joined by OR (a question's words are each optional; chunks matching more of them rank higher).
// The query is MATERIALIZED: inlined, PostgreSQL computed it again for every matching row (424 ms instead of 20 at
// 10,000 chunks), and only the best chunks are joined with their articles.
import { headingText, languageOf, type KnowledgeArticle, type KnowledgeHit, type KnowledgeStore } from '../knowledge.ts';
import { first, prepared, text, type Db } from './db.ts';

/** Language subtag → text search configuration shipped with PostgreSQL (13+); others use 'simple'. */
const CONFIGS: Record<string, string> = {
  da: 'danish',
  de: 'german',
  en: 'english',
  es: 'spanish',
  fi: 'finnish',
  fr: 'french',
  hu: 'hungarian',
  it: 'italian',
  nb: 'norwegian',
  nl: 'dutch',
  nn: 'norwegian',
  no: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sv: 'swedish',
  tr: 'turkish',
};
const ALL_CONFIGS = [...new Set(Object.values(CONFIGS)), 'simple'];
/** An article without a locale is taken as English. */
export const configOf = (locale: string | undefined): string => (locale ? (CONFIGS[languageOf(locale) ?? ''] ?? 'simple') : 'english');

interface ArticleRow {
  id: string;
  url: string | null;
  title: string;
  body: string;
  format: KnowledgeArticle['format'];
  locale: string | null;
  tags: string[];
  origin: string;
  etag: string | null;
  last_modified: string | null;
  created_at: number;
  updated_at: number;
}

interface HitRow {
  article_id: string;
  position: number;
  heading_path: string[];
  text: string;
  title: string;
  url: string | null;
  score: number;
}

const COLUMNS = 'id, url, title, body, format, locale, tags, origin, etag, last_modified, created_at, updated_at';
const UPSERT = prepared(
  'knowledge_upsert',
  `INSERT INTO knowledge_articles (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
   ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, title = EXCLUDED.title, body = EXCLUDED.body, format = EXCLUDED.format,
     locale = EXCLUDED.locale, tags = EXCLUDED.tags, origin = EXCLUDED.origin, etag = EXCLUDED.etag,
     last_modified = EXCLUDED.last_modified, updated_at = EXCLUDED.updated_at`,
);
const DELETE_CHUNKS = prepared('knowledge_delete_chunks', 'DELETE FROM knowledge_chunks WHERE article_id = $1');
const INSERT_CHUNKS = prepared(
  'knowledge_insert_chunks',
  `INSERT INTO knowledge_chunks (article_id, position, heading_path, text, lang, config, tsv, embedding)
   SELECT $1, x.position, x.heading_path, x.text, $3, $4::regconfig,
     setweight(to_tsvector($4::regconfig, $5 || ' ' || array_to_string(x.heading_path, ' ')), 'A') || setweight(to_tsvector($4::regconfig, x.text), 'B'),
     x.embedding
   FROM jsonb_to_recordset($2::jsonb) AS x(position integer, heading_path text[], text text, embedding real[])`,
);
const GET = prepared('knowledge_get', `SELECT ${COLUMNS} FROM knowledge_articles WHERE id = $1`);
const BY_URL = prepared('knowledge_by_url', `SELECT ${COLUMNS} FROM knowledge_articles WHERE url = $1`);
const LIST = prepared(
  'knowledge_list',
  `SELECT ${COLUMNS} FROM knowledge_articles WHERE $1::text IS NULL OR id COLLATE "C" > $1 ORDER BY id COLLATE "C" LIMIT $2`,
);
const BY_ORIGIN = prepared('knowledge_by_origin', 'SELECT id, url, etag, last_modified FROM knowledge_articles WHERE origin = $1');
const REMOVE = prepared('knowledge_remove', 'DELETE FROM knowledge_articles WHERE id = $1 RETURNING id');
const COUNT = prepared('knowledge_count', 'SELECT (SELECT count(*) FROM knowledge_articles) AS articles, (SELECT count(*) FROM knowledge_chunks) AS chunks');
const SEARCH = prepared(
  'knowledge_search',
  `WITH q AS (
     SELECT cfg::regconfig AS cfg, replace(websearch_to_tsquery(cfg::regconfig, $1)::text, ' & ', ' | ') AS qt FROM unnest($2::text[]) AS cfg
   ), qq AS MATERIALIZED (SELECT cfg, qt::tsquery AS query FROM q WHERE qt <> ''),
   top AS (
     SELECT c.article_id, c.position, c.heading_path, c.text, ts_rank(c.tsv, qq.query, 1) AS score
     FROM qq JOIN knowledge_chunks c ON c.config = qq.cfg AND c.tsv @@ qq.query
     WHERE $3::text IS NULL OR c.lang IS NULL OR c.lang = $3
     ORDER BY score DESC, c.article_id, c.position LIMIT $4
   )
   SELECT top.article_id, top.position, top.heading_path, top.text, a.title, a.url, top.score
   FROM top JOIN knowledge_articles a ON a.id = top.article_id
   ORDER BY top.score DESC, top.article_id, top.position`,
);
const NEAREST = prepared(
  'knowledge_nearest',
  `SELECT c.article_id, c.position, c.heading_path, c.text, a.title, a.url,
     (SELECT sum(x * y) FROM unnest(c.embedding, $1::real[]) AS t(x, y)) AS score
   FROM knowledge_chunks c JOIN knowledge_articles a ON a.id = c.article_id
   WHERE c.embedding IS NOT NULL AND cardinality(c.embedding) = cardinality($1::real[]) AND ($2::text IS NULL OR c.lang IS NULL OR c.lang = $2)
   ORDER BY score DESC, c.article_id, c.position LIMIT $3`,
);

function toArticle(r: ArticleRow): KnowledgeArticle {
  const a: KnowledgeArticle = {
    id: r.id,
    title: r.title,
    body: r.body,
    format: r.format,
    tags: r.tags,
    origin: r.origin,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
  if (r.url !== null) a.url = r.url;
  if (r.locale !== null) a.locale = r.locale;
  if (r.etag !== null) a.etag = r.etag;
  if (r.last_modified !== null) a.lastModified = r.last_modified;
  return a;
}

function toHit(r: HitRow): KnowledgeHit {
  const h: KnowledgeHit = {
    chunkId: `${r.article_id}#${r.position}`,
    articleId: r.article_id,
    title: r.title,
    heading: headingText(r.heading_path),
    text: r.text,
    score: Number(r.score),
  };
  if (r.url !== null) h.url = r.url;
  return h;
}

const CONFIGS_QUERY = prepared('knowledge_configs', 'SELECT DISTINCT config::text AS config FROM knowledge_chunks');
/** How long the languages in use are remembered (another node may add one; it is searched after this at the latest). */
const CONFIGS_TTL_MS = 5000;

export function postgresKnowledge(db: Db, transaction: <T>(fn: (tx: Db) => Promise<T>) => Promise<T>): KnowledgeStore {
  // A query runs once per configuration: only in those the chunks use (each run scans the GIN index again).
  let inUse: { at: number; configs: Set<string> } | undefined;
  const configsInUse = async () => {
    if (!inUse || Date.now() - inUse.at > CONFIGS_TTL_MS) {
      const rows = await db.rows<{ config: string }>(CONFIGS_QUERY, []);
      inUse = { at: Date.now(), configs: new Set(rows.map((r) => r.config)) };
    }
    return inUse.configs;
  };
  /** The locale's own configuration and English (articles without a locale), or every one in use. */
  const configsFor = async (locale: string | undefined) => {
    const used = await configsInUse();
    return (locale ? [...new Set([configOf(locale), 'english'])] : ALL_CONFIGS).filter((c) => used.has(c));
  };
  return {
    put: (a, chunks) =>
      transaction(async (tx) => {
        await tx.rows(UPSERT, [
          a.id,
          a.url ?? null,
          text(a.title),
          text(a.body),
          a.format,
          a.locale ?? null,
          a.tags.map(text),
          a.origin,
          a.etag ?? null,
          a.lastModified ?? null,
          a.createdAt,
          a.updatedAt,
        ]);
        await tx.rows(DELETE_CHUNKS, [a.id]);
        const rows = chunks.map((c) => ({ position: c.position, heading_path: c.headingPath.map(text), text: text(c.text), embedding: c.embedding ?? null }));
        inUse?.configs.add(configOf(a.locale));
        if (rows.length) await tx.rows(INSERT_CHUNKS, [a.id, JSON.stringify(rows), languageOf(a.locale) ?? null, configOf(a.locale), text(a.title)]);
      }),
    get: async (id) => {
      const r = await first(db.rows<ArticleRow>(GET, [id]));
      return r && toArticle(r);
    },
    byUrl: async (url) => {
      const r = await first(db.rows<ArticleRow>(BY_URL, [url]));
      return r && toArticle(r);
    },
    list: async ({ after, limit }) => (await db.rows<ArticleRow>(LIST, [after ?? null, limit])).map(toArticle),
    byOrigin: async (origin) =>
      (await db.rows<{ id: string; url: string | null; etag: string | null; last_modified: string | null }>(BY_ORIGIN, [origin])).map((r) => ({
        id: r.id,
        url: r.url ?? undefined,
        etag: r.etag ?? undefined,
        lastModified: r.last_modified ?? undefined,
      })),
    remove: async (id) => (await db.rows(REMOVE, [id])).length > 0,
    search: async (query, o) => {
      const configs = await configsFor(o.locale);
      if (configs.length === 0) return [];
      return (await db.rows<HitRow>(SEARCH, [text(query), configs, languageOf(o.locale) ?? null, o.limit])).map(toHit);
    },
    nearest: async (vector, o) => (await db.rows<HitRow>(NEAREST, [vector, languageOf(o.locale) ?? null, o.limit])).map(toHit),
    count: async () => {
      const [r] = await db.rows<{ articles: number; chunks: number }>(COUNT, []);
      return { articles: Number(r.articles), chunks: Number(r.chunks) };
    },
    indexInfo: () => ({ kind: 'postgres', state: 'database', chunks: -1, rebuilds: 0 }),
  };
}
