// The LMDB engine's keyword index over knowledge chunks: BM25 over the title, heading and text of each chunk (bm25.ts:
// typed-array posting lists, an exact top-k search), in memory, its state saved in the store (`knowledgeIndex` table)
// so that a restart loads it instead of tokenising every chunk again. The saved state carries the generation of the
// articles it reflects; a state that is missing, unreadable, of another format or of another generation is rebuilt
// from the chunks. Words are split and weighed as MiniSearch did (the library this index replaced): the same
// rankings, at a fraction of the CPU per search.
import { stemmer } from 'stemmer';
import { createBm25Index, type Bm25Doc } from './bm25.ts';

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

/** Words are separated by white space and punctuation (Unicode classes), as MiniSearch splits them. */
const SEPARATORS = /[\n\r\p{Z}\p{P}]+/u;
export const queryTerms = (query: string): string[] =>
  query
    .split(SEPARATORS)
    .map(processTerm)
    .filter((t): t is string => !!t);

const FIELDS = ['title', 'heading', 'text'] as const;
/** BM25+ as MiniSearch scores it (k1 1.2, b 0.7, δ 0.5), the title and headings weighted up. */
const PARAMS = { boosts: [2, 1.5, 1], k1: 1.2, b: 0.7, delta: 0.5 };
const FORMAT = 'parley-bm25/1';

/** A field's length is its count of distinct raw words (stop words included); its terms are the processed words. */
function analyse(chunk: IndexedChunk): Bm25Doc {
  const lengths: number[] = [];
  const terms: Map<string, number>[] = [];
  for (const field of FIELDS) {
    const words = chunk[field].split(SEPARATORS);
    lengths.push(new Set(words).size);
    const tf = new Map<string, number>();
    for (const w of words) {
      const t = processTerm(w);
      if (t) tf.set(t, (tf.get(t) ?? 0) + 1);
    }
    terms.push(tf);
  }
  return { lengths, terms };
}

/** The saved state: the terms once, then each chunk with its field lengths and `[term index, field, frequency]…`. */
export interface ChunkIndexState {
  format: typeof FORMAT;
  terms: string[];
  chunks: { id: string; articleId: string; lang?: string; lengths: number[]; postings: number[] }[];
}

export interface ChunkIndex {
  replace(articleId: string, chunks: IndexedChunk[]): void;
  remove(articleId: string): void;
  search(query: string, o: { lang?: string; limit: number }): { id: string; articleId: string; score: number }[];
  size(): number;
  toState(): ChunkIndexState;
}

interface Meta {
  id: string;
  articleId: string;
  lang?: string;
}

function restore(state: ChunkIndexState, add: (meta: Meta, doc: Bm25Doc) => void) {
  if (state.format !== FORMAT || !Array.isArray(state.terms) || !Array.isArray(state.chunks)) throw new Error(`not a ${FORMAT} state`);
  for (const c of state.chunks) {
    const terms = FIELDS.map(() => new Map<string, number>());
    for (let i = 0; i < c.postings.length; i += 3) {
      const term = state.terms[c.postings[i]];
      const field = terms[c.postings[i + 1]];
      if (term === undefined || field === undefined) throw new Error('a saved posting names no term or field');
      field.set(term, c.postings[i + 2]);
    }
    if (c.lengths.length !== FIELDS.length) throw new Error('a saved chunk has no length for each field');
    add({ id: c.id, articleId: c.articleId, ...(c.lang == null ? {} : { lang: c.lang }) }, { lengths: c.lengths, terms });
  }
}

export function createChunkIndex(state?: ChunkIndexState): ChunkIndex {
  const bm25 = createBm25Index(PARAMS);
  const meta: (Meta | undefined)[] = [];
  // the slots of each article's chunks, to discard them when it changes
  const byArticle = new Map<string, number[]>();
  const add = (m: Meta, doc: Bm25Doc) => {
    const slot = bm25.add(doc);
    meta[slot] = m;
    byArticle.set(m.articleId, (byArticle.get(m.articleId) ?? []).concat(slot));
  };
  const remove = (articleId: string) => {
    for (const slot of byArticle.get(articleId) ?? []) {
      bm25.remove(slot);
      meta[slot] = undefined;
    }
    byArticle.delete(articleId);
  };
  if (state) restore(state, add);
  // exact ties (rare: identical chunks) go to the smaller chunk id, whatever the slots' history
  const before = (a: number, b: number) => (meta[a] as Meta).id < (meta[b] as Meta).id;

  return {
    replace(articleId, chunks) {
      remove(articleId);
      for (const c of chunks) add({ id: c.id, articleId, ...(c.lang === undefined ? {} : { lang: c.lang }) }, analyse(c));
    },
    remove,
    search(query, o) {
      const accept = (slot: number) => {
        const lang = (meta[slot] as Meta).lang;
        return !o.lang || lang === undefined || lang === o.lang;
      };
      return bm25.search(queryTerms(query), o.limit, accept, before).map(({ slot, score }) => {
        const m = meta[slot] as Meta;
        return { id: m.id, articleId: m.articleId, score };
      });
    },
    size: () => bm25.size(),
    toState() {
      const termIds = new Map<string, number>();
      const chunks: ChunkIndexState['chunks'] = [];
      meta.forEach((m, slot) => {
        const doc = m && bm25.doc(slot);
        if (!m || !doc) return;
        const postings: number[] = [];
        doc.terms.forEach((tf, field) => {
          for (const [term, n] of tf) {
            let id = termIds.get(term);
            if (id === undefined) termIds.set(term, (id = termIds.size));
            postings.push(id, field, n);
          }
        });
        chunks.push(Object.assign({}, m, { lengths: doc.lengths, postings }));
      });
      return { format: FORMAT, terms: [...termIds.keys()], chunks };
    },
  };
}
