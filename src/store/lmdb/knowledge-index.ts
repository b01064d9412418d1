// The LMDB engine's keyword index over knowledge chunks: MiniSearch (BM25), in memory, its state saved in the store
// (`knowledgeIndex` table) so that a restart loads it instead of indexing every chunk again. The saved state carries
// the generation of the articles it reflects; a state that is missing, unreadable or of another generation is rebuilt
// from the chunks.
import MiniSearch, { type AsPlainObject, type SearchResult } from 'minisearch';
import { stemmer } from 'stemmer';

export interface IndexedChunk {
  id: string;
  articleId: string;
  lang?: string;
  title: string;
  heading: string;
  text: string;
}

const STOP_WORDS = new Set(
  'a an and are as at be but by can do does for from how i if in into is it its me my of on or our so that the their then there these this to was we what when where which who why will with you your'.split(
    ' ',
  ),
);

/** Lower case, no stop words, Porter stems (harmless on other languages' words: they merely stay apart less). */
export function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (t.length < 2 && !/\d/.test(t)) return null;
  if (STOP_WORDS.has(t)) return null;
  return /^[a-z]+$/.test(t) ? stemmer(t) : t;
}

const OPTIONS = {
  idField: 'id',
  fields: ['title', 'heading', 'text'],
  storeFields: ['articleId', 'lang'],
  processTerm,
  searchOptions: { boost: { title: 2, heading: 1.5 }, combineWith: 'OR' as const, processTerm },
};

export interface ChunkIndex {
  replace(articleId: string, chunks: IndexedChunk[]): void;
  remove(articleId: string): void;
  search(query: string, o: { lang?: string; limit: number }): { id: string; articleId: string; score: number }[];
  size(): number;
  toState(): AsPlainObject;
}

export function createChunkIndex(state?: AsPlainObject): ChunkIndex {
  const mini: MiniSearch<IndexedChunk> = state ? MiniSearch.loadJS<IndexedChunk>(state, OPTIONS) : new MiniSearch<IndexedChunk>(OPTIONS);
  // chunk ids of each article, to discard them when it changes (MiniSearch keeps no such list)
  const byArticle = new Map<string, string[]>();
  if (state) {
    for (const [shortId, id] of Object.entries(state.documentIds)) {
      const articleId = (state.storedFields[shortId] as { articleId?: string } | undefined)?.articleId;
      if (articleId) byArticle.set(articleId, (byArticle.get(articleId) ?? []).concat(String(id)));
    }
  }
  const remove = (articleId: string) => {
    for (const id of byArticle.get(articleId) ?? []) if (mini.has(id)) mini.discard(id);
    byArticle.delete(articleId);
  };
  return {
    replace(articleId, chunks) {
      remove(articleId);
      mini.addAll(chunks);
      byArticle.set(
        articleId,
        chunks.map((c) => c.id),
      );
    },
    remove,
    search(query, o) {
      const filter = o.lang ? (r: SearchResult) => r.lang === undefined || r.lang === o.lang : undefined;
      return mini
        .search(query, { filter })
        .slice(0, o.limit)
        .map((r) => ({ id: String(r.id), articleId: r.articleId as string, score: r.score }));
    },
    size: () => mini.documentCount,
    toState: () => mini.toJSON(),
  };
}
